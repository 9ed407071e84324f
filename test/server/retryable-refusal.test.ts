/**
 * The JSON-RPC route's retryable refusals (src/server/unavailable.ts): an answer whose
 * JSON-RPC error is UNAVAILABLE leaves as HTTP 503 with Retry-After, any other stays as it was;
 * and the SDK's JSON-RPC client reads such a 503 as the same JSON-RPC error it reads from a 200,
 * on SendMessage and SendStreamingMessage (so neither our clients nor the page need a mapping of
 * their own). Should an SDK update read non-2xx answers otherwise, this says where.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { TaskNotFoundError, toJsonRpcError } from '@a2a-js/sdk/errors';
import { RETRY_AFTER_SECONDS, UnavailableError } from '../../src/server/unavailable.js';
import { isRetryableRefusal, retryableRefusalAnswers } from '../../src/server/unavailable.js';
import { userMessage } from '../e2e/support.js';

const refusalError = () => toJsonRpcError(new UnavailableError('At the limit; send it again.'));
const notFoundError = toJsonRpcError(new TaskNotFoundError('No such task.'));

/** Serves `answer(id)` on POST /, as the SDK's JSON-RPC handler writes its answers (status 200, then json). */
async function serving(answer: (id: unknown) => unknown, status = 200) {
  const app = express();
  app.use(express.json(), retryableRefusalAnswers());
  app.post('/', (req, res) => {
    res.status(status).json(answer(req.body?.id));
  });
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function post(url: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'SendMessage', params: {} }),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
}

describe('a retryable refusal on the JSON-RPC route', () => {
  it('is told by its error detail: the reason UNAVAILABLE, and nothing else', () => {
    assert.equal(isRetryableRefusal(refusalError()), true);
    assert.equal(isRetryableRefusal(notFoundError), false);
    assert.equal(isRetryableRefusal({ code: -32603, message: 'Internal error; the server logged it.' }), false);
    assert.equal(isRetryableRefusal(undefined), false);
  });

  it(`leaves as HTTP 503 with Retry-After ${RETRY_AFTER_SECONDS}, its body as written`, async () => {
    const server = await serving((id) => ({ jsonrpc: '2.0', id, error: refusalError() }));
    try {
      assert.deepEqual(await post(server.url), {
        status: 503,
        retryAfter: String(RETRY_AFTER_SECONDS),
        body: { jsonrpc: '2.0', id: 3, error: refusalError() },
      });
    } finally {
      await server.close();
    }
  });

  it('any other JSON-RPC error keeps its status and gets no Retry-After', async () => {
    for (const [answer, status] of [
      [(id: unknown) => ({ jsonrpc: '2.0', id, error: notFoundError }), 200],
      [(id: unknown) => ({ jsonrpc: '2.0', id, error: { code: -32603, message: 'x' } }), 500],
    ] as const) {
      const server = await serving(answer, status);
      try {
        const got = await post(server.url);
        assert.equal(got.status, status);
        assert.equal(got.retryAfter, null);
      } finally {
        await server.close();
      }
    }
  });

  it("the SDK's JSON-RPC client reads the 503 as the same JSON-RPC error as a 200, on SendMessage and SendStreamingMessage", async () => {
    const thrown = async (url: string) => {
      const transport = await new JsonRpcTransportFactory().create(url, {} as never);
      const params = { tenant: '', message: userMessage('hi'), configuration: undefined, metadata: {} };
      const errors: any[] = [];
      await transport.sendMessage(params).catch((error: unknown) => errors.push(error));
      await transport
        .sendMessageStream(params)
        .next()
        .catch((error: unknown) => errors.push(error));
      assert.equal(errors.length, 2, 'both refused');
      return errors.map((error) => ({
        name: error.name,
        message: error.message,
        code: error.envelopeCode,
        data: error.data,
      }));
    };
    const refusing = await serving((id) => ({ jsonrpc: '2.0', id, error: refusalError() }));
    const refusing200 = express();
    refusing200.use(express.json());
    refusing200.post('/', (req, res) => void res.json({ jsonrpc: '2.0', id: req.body?.id, error: refusalError() }));
    const plain = createServer(refusing200).listen(0, '127.0.0.1');
    await new Promise((resolve) => plain.once('listening', resolve));
    try {
      const from503 = await thrown(refusing.url);
      const from200 = await thrown(`http://127.0.0.1:${(plain.address() as AddressInfo).port}/`);
      assert.deepEqual(from503, from200);
      assert.equal(from503[0]!.code, -32603);
      assert.deepEqual(
        from503[0]!.data.map((detail: any) => [detail.reason, detail.metadata]),
        [['UNAVAILABLE', { retryAfterSeconds: String(RETRY_AFTER_SECONDS) }]],
      );
    } finally {
      await refusing.close();
      plain.closeAllConnections();
      await new Promise((resolve) => plain.close(resolve));
    }
  });
});
