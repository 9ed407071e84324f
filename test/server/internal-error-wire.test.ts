import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { credentials, makeGenericClientConstructor, status, type ServiceError } from '@grpc/grpc-js';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { compose } from '../../src/a2a/index.js';
import { silentLogger } from '../../src/log.js';
import { errorMappingStep, INTERNAL_ERROR_MESSAGE } from '../../src/server/a2a-errors.js';
import { baseAgentCard } from '../../src/server/card.js';
import { startGrpcServer, type RunningGrpcServer } from '../../src/server/grpc-server.js';
import { createHttpApp } from '../../src/server/http-app.js';

/**
 * A failure of the server itself, as each binding really sends it (not a table): JSON-RPC
 * -32603, HTTP 500, gRPC INTERNAL (A2A 1.0.1, section 3.3.2), with the fixed message. The SDK's
 * mapping alone sends gRPC UNKNOWN for it: `transportForms` gives `InternalFailure` INTERNAL.
 */
const failure = new Error('the store broke at /srv/data/harness.db with api_key=sk-abcdefghijkl');

let httpServer: Server;
let grpc: RunningGrpcServer;
let url: string;
const logged: unknown[] = [];

before(async () => {
  // Every call fails, behind the `errorMapping` step alone: the one path all three bindings run.
  const path = compose([errorMappingStep((error) => logged.push(error))], () => Promise.reject(failure));
  grpc = await startGrpcServer(path, '127.0.0.1', 0);
  const card = async () => baseAgentCard({ httpUrl: url, grpcAddress: grpc.address, version: 'test' });
  httpServer = createServer(createHttpApp({ path, card, bodyLimit: '1mb', log: silentLogger }));
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
});

after(async () => {
  httpServer?.closeAllConnections();
  await new Promise((resolve) => httpServer?.close(resolve));
  await grpc?.close();
});

describe('an internal failure on the wire', () => {
  it('JSON-RPC: -32603 with the fixed message', async () => {
    const response = await fetch(`${url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't-1' } }),
    });
    const body = (await response.json()) as { error: { code: number; message: string } };
    assert.equal(body.error.code, -32603);
    assert.equal(body.error.message, INTERNAL_ERROR_MESSAGE);
  });

  it('HTTP+JSON: 500 with the fixed message', async () => {
    const response = await fetch(`${url}/a2a/rest/tasks/t-1`, { headers: { 'A2A-Version': '1.0' } });
    const body = (await response.json()) as { error: { code: number; message: string } };
    assert.equal(response.status, 500);
    assert.equal(body.error.code, 500);
    assert.equal(body.error.message, INTERNAL_ERROR_MESSAGE);
  });

  it("gRPC: INTERNAL with the fixed message, where the SDK's mapping alone sends UNKNOWN", async () => {
    const Client = makeGenericClientConstructor(A2AService, 'A2AService');
    const client = new Client(grpc.address, credentials.createInsecure()) as unknown as {
      getTask: (
        request: unknown,
        metadata: import('@grpc/grpc-js').Metadata,
        done: (error: ServiceError | null) => void,
      ) => void;
      close(): void;
    };
    try {
      const { Metadata } = await import('@grpc/grpc-js');
      const metadata = new Metadata();
      metadata.set('a2a-version', '1.0');
      const error = await new Promise<ServiceError | null>((resolve) =>
        client.getTask({ id: 't-1' }, metadata, resolve),
      );
      assert.equal(error?.code, status.INTERNAL, error?.message);
      assert.equal(error?.details, INTERNAL_ERROR_MESSAGE);
    } finally {
      client.close();
    }
  });

  it('the cause reaches the log only', () => {
    assert.ok(logged.length >= 3 && logged.every((error) => error === failure));
  });
});
