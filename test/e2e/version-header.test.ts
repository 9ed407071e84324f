/**
 * The A2A-Version header (issue 33): a call without it counts as A2A 0.3, which the harness
 * does not speak. On every transport and kind of call, the refusal is A2A's
 * VersionNotSupportedError and says what to send: the header `A2A-Version: 1.0` or `1.1`
 * (issue 36: the harness speaks both).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { Client as GrpcClient, credentials, Metadata, status as grpcStatus, type ServiceError } from '@grpc/grpc-js';
import { rawUnaryCall } from '../fixtures/raw-grpc.js';
import { startTestHarness, type TestHarness } from './support.js';

const SEND = /send the header `A2A-Version: 1\.0` or `A2A-Version: 1\.1`\.$/;
const NO_HEADER = /^A request without the A2A-Version header asks for A2A 0\.3, which is not supported/;
const GET_TASK = Buffer.from([18, 1, 120]); // GetTaskRequest { id: "x" }
const SUBSCRIBE = Buffer.from([18, 1, 120]); // SubscribeToTaskRequest { id: "x" }

let h: TestHarness;
before(async () => {
  h = await startTestHarness();
});
after(async () => {
  await h?.close();
});

function sendMessageParams() {
  return { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: '/help' }] } };
}

async function jsonRpc(method: string, params: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${h.harness.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  return (await res.json()) as { error?: { code: number; message: string } };
}

async function rest(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${h.harness.url}/a2a/rest${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: (await res.json()) as { error?: { status: string; message: string } } };
}

/** A server-streaming gRPC call without the a2a-version metadata: the status it ends with. */
function rawStreamCall(method: string, request: Buffer): Promise<{ code: number; details: string }> {
  const client = new GrpcClient(h.harness.grpcAddress!, credentials.createInsecure());
  const call = client.makeServerStreamRequest(
    `/lf.a2a.v1.A2AService/${method}`,
    (bytes: Buffer) => bytes,
    (bytes: Buffer) => bytes,
    request,
    new Metadata(),
    { deadline: Date.now() + 10_000 },
  );
  return new Promise((resolve) => {
    call.on('data', () => {});
    call.on('error', (error: ServiceError) => {
      client.close();
      resolve({ code: error.code, details: error.details });
    });
    call.on('end', () => {
      client.close();
      resolve({ code: grpcStatus.OK, details: '' });
    });
  });
}

describe('a call without the A2A-Version header is told to send A2A-Version: 1.0', () => {
  it('JSON-RPC, blocking and streaming: VersionNotSupportedError (-32009)', async () => {
    for (const method of ['SendMessage', 'SendStreamingMessage', 'GetTask']) {
      const params = method === 'GetTask' ? { id: 'x' } : sendMessageParams();
      const { error } = await jsonRpc(method, params);
      assert.equal(error?.code, A2A_ERROR_CODE.VERSION_NOT_SUPPORTED, method);
      assert.match(error.message, NO_HEADER, method);
      assert.match(error.message, SEND, method);
    }
  });

  it('HTTP+JSON, send, stream and get: 400 FAILED_PRECONDITION', async () => {
    for (const [path, method, body] of [
      ['/message:send', 'POST', sendMessageParams()],
      ['/message:stream', 'POST', sendMessageParams()],
      ['/tasks/x', 'GET', undefined],
    ] as const) {
      const { status, body: answer } = await rest(path, { method, body });
      assert.equal(status, 400, path);
      assert.equal(answer.error?.status, 'FAILED_PRECONDITION', path);
      assert.match(answer.error.message, NO_HEADER, path);
      assert.match(answer.error.message, SEND, path);
    }
  });

  it('gRPC, unary and streaming: FAILED_PRECONDITION', async () => {
    const unary = await rawUnaryCall(h.harness.grpcAddress!, 'GetTask', GET_TASK, null);
    const stream = await rawStreamCall('SubscribeToTask', SUBSCRIBE);
    for (const { code, details } of [unary, stream]) {
      assert.equal(code, grpcStatus.FAILED_PRECONDITION, details);
      assert.match(details, NO_HEADER);
      assert.match(details, SEND);
    }
  });
});

describe('a call asking for another version is told which one to send', () => {
  it('on each transport, the version asked for is named', async () => {
    const { error } = await jsonRpc('GetTask', { id: 'x' }, { 'A2A-Version': '0.9' });
    const { body } = await rest('/tasks/x', { headers: { 'A2A-Version': '0.9' } });
    const grpc = await rawUnaryCall(h.harness.grpcAddress!, 'GetTask', GET_TASK, '0.9');
    assert.equal(grpc.code, grpcStatus.FAILED_PRECONDITION);
    for (const message of [error?.message, body.error?.message, grpc.details]) {
      assert.match(
        message ?? '',
        /^The requested A2A protocol version '0\.9' is not supported: this server speaks A2A 1\.0 and 1\.1; /,
      );
      assert.match(message ?? '', SEND);
    }
  });

  for (const version of ['1.0', '1.1']) {
    it(`with A2A-Version: ${version} the same calls are answered (issue 36: both are spoken)`, async () => {
      const { error } = await jsonRpc('GetTask', { id: 'x' }, { 'A2A-Version': version });
      assert.equal(error?.code, A2A_ERROR_CODE.TASK_NOT_FOUND);
      const { status } = await rest('/tasks/x', { headers: { 'A2A-Version': version } });
      assert.equal(status, 404);
      const grpc = await rawUnaryCall(h.harness.grpcAddress!, 'GetTask', GET_TASK, version);
      assert.equal(grpc.code, grpcStatus.NOT_FOUND);
    });
  }
});
