/**
 * The retryable refusal (src/server/unavailable.ts) against the SDK's own mapping: what the SDK
 * does with the error as it is, and with each transport's form of it. Should an SDK update map
 * errors otherwise, this says where.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { status as grpcStatus } from '@grpc/grpc-js';
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { UnauthenticatedUser, type A2ARequestHandler } from '@a2a-js/sdk/server';
import { A2A_ERROR_CODE, TaskNotFoundError, restStatusFor, toJsonRpcError } from '@a2a-js/sdk/errors';
import { grpcStatusFor } from '@a2a-js/sdk/errors/grpc';
import type { Call } from '../../src/a2a/index.js';
import { readJsonBody } from '../../src/server/http-body.js';
import { restBinding } from '../../src/server/rest-binding.js';
import { RETRY_AFTER_SECONDS, UnavailableError, UnavailableForm } from '../../src/server/unavailable.js';

const refusal = () => new UnavailableError('At the limit; try again.');

describe('a retryable refusal on each transport (A2A 1.0 section 3.3.2)', () => {
  it('JSON-RPC: the SDK answers -32603 for it as it is, with its reason and when to retry', () => {
    const error = toJsonRpcError(refusal());
    assert.equal(error.code, A2A_ERROR_CODE.INTERNAL_ERROR);
    assert.equal(error.message, 'At the limit; try again.');
    assert.deepEqual(
      error.data?.map((detail: any) => [detail.reason, detail.metadata]),
      [['UNAVAILABLE', { retryAfterSeconds: String(RETRY_AFTER_SECONDS) }]],
    );
  });

  it('HTTP+JSON and gRPC: the SDK knows no code for it as it is (500, UNKNOWN); each form carries its own (503, UNAVAILABLE)', () => {
    assert.equal(restStatusFor(refusal()), 500);
    assert.equal(grpcStatusFor(refusal()), grpcStatus.UNKNOWN);
    assert.equal(restStatusFor(refusal().inForm('rest')), 503);
    assert.equal(grpcStatusFor(refusal().inForm('grpc')), grpcStatus.UNAVAILABLE);
    assert.ok(refusal().inForm('grpc') instanceof UnavailableError);
  });

  it('the handler a transport is given hands the refusal on in its form, and any other error as it is', async () => {
    const notFound = new TaskNotFoundError('no such task');
    const failing = (error: unknown) =>
      ({
        sendMessage: () => Promise.reject(error),
        // eslint-disable-next-line require-yield
        sendMessageStream: async function* () {
          throw error;
        },
      }) as unknown as A2ARequestHandler;
    const rest = new UnavailableForm(failing(refusal()), 'rest');
    await assert.rejects(rest.sendMessage({} as never, {} as never), { transport: 'rest', statusCode: 503 });
    const grpc = new UnavailableForm(failing(refusal()), 'grpc');
    await assert.rejects(grpc.sendMessageStream({} as never, {} as never).next(), {
      transport: 'grpc',
      status: grpcStatus.UNAVAILABLE,
    });
    await assert.rejects(
      new UnavailableForm(failing(notFound), 'rest').sendMessage({} as never, {} as never),
      (e) => e === notFound,
    );
  });

  it('HTTP+JSON: the binding answers the refusal 503 with Retry-After and the status name UNAVAILABLE; other errors as the SDK maps them (issue 36)', async () => {
    const binding = restBinding({
      path: {
        run: ((call: Call) =>
          Promise.reject(
            (call.params as { id?: string }).id === 'refused' ? refusal() : new TaskNotFoundError('no such task'),
          )) as never,
      },
      card: async () => ({}) as never,
      onInternal: () => {},
    });
    const server = createServer((req, res) => {
      const [path, search = ''] = req.url!.split('?');
      void readJsonBody(req, 1024).then(() => binding(req, res, new UnauthenticatedUser(), path!, search));
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const headers = { [A2A_VERSION_HEADER]: A2A_PROTOCOL_VERSION };
      const refused = await fetch(`${base}/tasks/refused`, { headers });
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), String(RETRY_AFTER_SECONDS));
      const body = (await refused.json()) as { error: { code: number; status: string; message: string } };
      assert.deepEqual(
        [body.error.code, body.error.status, body.error.message],
        [503, 'UNAVAILABLE', 'At the limit; try again.'],
      );
      const missing = await fetch(`${base}/tasks/missing`, { headers });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers.get('retry-after'), null);
      assert.equal(((await missing.json()) as { error: { status: string } }).error.status, 'NOT_FOUND');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
