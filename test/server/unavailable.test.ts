/**
 * The retryable refusal (src/server/unavailable.ts): what the SDK's mappings do with it, the codes
 * `transportForms` gives it where they know none, and how the bindings send it. Should an SDK
 * update map errors otherwise, this says where.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status as grpcStatus,
  type ServiceError,
} from '@grpc/grpc-js';
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { UnauthenticatedUser } from '@a2a-js/sdk/server';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { A2A_ERROR_CODE, TaskNotFoundError, restStatusFor, toJsonRpcError } from '@a2a-js/sdk/errors';
import { grpcStatusFor } from '@a2a-js/sdk/errors/grpc';
import type { Call } from '../../src/a2a/index.js';
import { loadGrpcErrorForms, transportForms } from '../../src/server/a2a-errors.js';
import { startGrpcServer } from '../../src/server/grpc-server.js';
import { readJsonBody } from '../../src/server/http-body.js';
import { restBinding } from '../../src/server/rest-binding.js';
import { RETRY_AFTER_SECONDS, UnavailableError } from '../../src/server/unavailable.js';

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

  it('HTTP+JSON and gRPC: the SDK knows no code for it (500, UNKNOWN); transportForms gives its own (503, UNAVAILABLE)', async () => {
    assert.equal(restStatusFor(refusal()), 500);
    assert.equal(grpcStatusFor(refusal()), grpcStatus.UNKNOWN);
    await loadGrpcErrorForms();
    const forms = transportForms(refusal());
    assert.deepEqual(
      [forms.jsonRpc.httpStatus, forms.http.status, forms.http.body.error.status],
      [503, 503, 'UNAVAILABLE'],
    );
    assert.equal(forms.grpc.code, grpcStatus.UNAVAILABLE);
  });

  it('gRPC: the binding ends a refused call UNAVAILABLE, with its message; other errors as the SDK maps them (issue 36)', async () => {
    const grpc = await startGrpcServer(
      {
        run: ((call: Call) =>
          Promise.reject(
            (call.params as { id?: string }).id === 'refused' ? refusal() : new TaskNotFoundError('no such task'),
          )) as never,
      },
      '127.0.0.1',
      0,
    );
    const Client = makeGenericClientConstructor(A2AService, 'A2AService');
    const client: any = new Client(grpc.address, credentials.createInsecure());
    const metadata = new Metadata();
    metadata.set('a2a-version', A2A_PROTOCOL_VERSION);
    const unary = (method: string, request: unknown) =>
      new Promise<ServiceError>((resolve, reject) =>
        client[method](request, metadata, (error: ServiceError | null) =>
          error ? resolve(error) : reject(new Error('answered')),
        ),
      );
    try {
      const refused = await unary('getTask', { tenant: '', id: 'refused' });
      assert.deepEqual([refused.code, refused.details], [grpcStatus.UNAVAILABLE, 'At the limit; try again.']);
      assert.equal((await unary('getTask', { tenant: '', id: 'missing' })).code, grpcStatus.NOT_FOUND);
    } finally {
      client.close();
      await grpc.close();
    }
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
