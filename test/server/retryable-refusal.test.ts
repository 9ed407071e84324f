/**
 * The JSON-RPC binding's retryable refusals (src/server/jsonrpc-binding.ts, issue 36): a call
 * refused with UNAVAILABLE (src/server/unavailable.ts) leaves as HTTP 503 with Retry-After, any
 * other error as an HTTP 200;
 * and the SDK's JSON-RPC client reads such a 503 as the same JSON-RPC error it reads from a 200,
 * on SendMessage and SendStreamingMessage (so neither our clients nor the page need a mapping of
 * their own). Should an SDK update read non-2xx answers otherwise, this says where.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { TaskNotFoundError, toJsonRpcError } from '@a2a-js/sdk/errors';
import { UnauthenticatedUser } from '@a2a-js/sdk/server';
import type { Call } from '../../src/a2a/index.js';
import { jsonRpcBinding } from '../../src/server/jsonrpc-binding.js';
import { readJsonBody } from '../../src/server/http-body.js';
import { RETRY_AFTER_SECONDS, UnavailableError } from '../../src/server/unavailable.js';
import { isRetryableRefusal } from '../../src/server/unavailable.js';
import { userMessage } from '../e2e/support.js';

const refusal = () => new UnavailableError('At the limit; send it again.');
const refusalError = () => toJsonRpcError(refusal());
const notFoundError = toJsonRpcError(new TaskNotFoundError('No such task.'));

/** The JSON-RPC binding (src/server/jsonrpc-binding.ts) over a path whose every call fails with `failure()`. */
function failingBinding(failure: () => unknown): RequestListener {
  const binding = jsonRpcBinding({
    path: {
      run: ((call: Call) =>
        call.streaming
          ? // eslint-disable-next-line require-yield
            (async function* () {
              throw failure();
            })()
          : Promise.reject(failure())) as never,
    },
    onInternal: () => {},
  });
  return (req, res) => {
    // The bare transport below sends no version; the refusal, not the version check, is under test.
    req.headers[A2A_VERSION_HEADER.toLowerCase()] ??= A2A_PROTOCOL_VERSION;
    void readJsonBody(req, 1 << 20).then(() => binding(req, res, new UnauthenticatedUser()));
  };
}

async function serving(listener: RequestListener) {
  const server = createServer(listener).listen(0, '127.0.0.1');
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
    headers: { 'content-type': 'application/json', [A2A_VERSION_HEADER]: A2A_PROTOCOL_VERSION },
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

  it(`leaves as HTTP 503 with Retry-After ${RETRY_AFTER_SECONDS}, the JSON-RPC error its body (issue 36)`, async () => {
    const server = await serving(failingBinding(refusal));
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

  it('any other JSON-RPC error is an HTTP 200 without Retry-After', async () => {
    for (const [failure, error] of [
      [() => new TaskNotFoundError('No such task.'), notFoundError],
      [() => new Error('a bug'), { code: -32603, message: 'Internal error; the server logged it.' }],
    ] as const) {
      const server = await serving(failingBinding(failure));
      try {
        const got = await post(server.url);
        assert.equal(got.status, 200);
        assert.equal(got.retryAfter, null);
        assert.deepEqual(
          { code: got.body.error.code, message: got.body.error.message },
          { code: error.code, message: error.message },
        );
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
    const refusing = await serving(failingBinding(refusal));
    // The same refusal in an HTTP 200, as the SDK's own JSON-RPC handler answered it.
    const plain = await serving((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const { id } = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id, error: refusalError() }));
      });
    });
    try {
      const from503 = await thrown(refusing.url);
      const from200 = await thrown(plain.url);
      assert.deepEqual(from503, from200);
      assert.equal(from503[0]!.code, -32603);
      assert.deepEqual(
        from503[0]!.data.map((detail: any) => [detail.reason, detail.metadata]),
        [['UNAVAILABLE', { retryAfterSeconds: String(RETRY_AFTER_SECONDS) }]],
      );
    } finally {
      await refusing.close();
      await plain.close();
    }
  });
});
