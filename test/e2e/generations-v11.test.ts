/**
 * A2A 1.1's generations on the wire (issue 36; spec/stream-resume-extension-v1.md, "A2A 1.1
 * generations"), on every transport, by raw requests (the SDK's client is 1.0's and drops the
 * fields): a 1.1 call sees `generation` as a field of the task; `GetTask` with
 * `currentGeneration` answers once the task's generation passes it; a send with a stale
 * `ifGenerationMatch` is refused as TaskGenerationMismatchError (-32010, HTTP 409, gRPC
 * ABORTED) and one with the task's generation runs; a 1.0 call beside them on the same task
 * sees what it always saw.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { status as grpcStatus } from '@grpc/grpc-js';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { Role } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { GENERATION_KEY } from '../../src/wire.js';
import { rawUnaryCall } from '../fixtures/raw-grpc.js';
import { startTestHarness, type TestHarness } from './support.js';

let h: TestHarness;
let taskId = '';

before(async () => {
  h = await startTestHarness();
  // A task to work on, made by a 1.0 client.
  const answer = await jsonRpc('SendMessage', { message: userMessage('hello') }, '1.0');
  taskId = (answer.result as { task: { id: string } }).task.id;
});
after(async () => {
  await h?.close();
});

function userMessage(text: string, ids: { taskId?: string } = {}) {
  return { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...ids };
}

async function jsonRpc(method: string, params: unknown, version: string) {
  const res = await fetch(`${h.harness.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': version },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
}

async function rest(path: string, version: string, body?: unknown) {
  const res = await fetch(`${h.harness.url}/a2a/rest${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': version },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The task's generation as its 1.0 metadata gives it. */
async function generationNow(): Promise<number> {
  const task = (await jsonRpc('GetTask', { id: taskId }, '1.0')).result as { metadata: Record<string, number> };
  return task.metadata[GENERATION_KEY]!;
}

/** A varint field's value in an encoded message (the last occurrence), or undefined. */
function varintField(bytes: Uint8Array, number: number): number | undefined {
  const reader = new BinaryReader(bytes);
  let found: number | undefined;
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === number && wireType === WireType.Varint) found = Number(reader.int64());
    else reader.skip(wireType);
  }
  return found;
}

/** Protobuf bytes of a GetTask, with `currentGeneration` (field 4) when given. */
function getTaskBytes(currentGeneration?: number): Buffer {
  const request = A2AService.getTask.requestSerialize({ tenant: '', id: taskId, historyLength: undefined });
  if (currentGeneration === undefined) return request;
  return Buffer.concat([request, new BinaryWriter().tag(4, WireType.Varint).int64(currentGeneration).finish()]);
}

/** Protobuf bytes of a blocking SendMessage on the task, with `configuration.ifGenerationMatch` (3.5). */
function sendBytes(text: string, ifGenerationMatch: number): Buffer {
  const part = { content: { $case: 'text' as const, value: text }, metadata: {}, filename: '', mediaType: '' };
  const message = {
    messageId: randomUUID(),
    taskId,
    contextId: '',
    role: Role.ROLE_USER,
    parts: [part],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
  const request = A2AService.sendMessage.requestSerialize({
    tenant: '',
    message,
    configuration: undefined,
    metadata: {},
  });
  const configuration = new BinaryWriter().tag(5, WireType.Varint).int64(ifGenerationMatch).finish();
  const field = new BinaryWriter().tag(3, WireType.LengthDelimited).bytes(configuration).finish();
  return Buffer.concat([request, field]);
}

describe('A2A 1.1 generations over JSON-RPC', () => {
  it('issue 36: a 1.1 GetTask has generation as a field; a 1.0 one beside it has only the metadata key', async () => {
    const now = await generationNow();
    const v11 = (await jsonRpc('GetTask', { id: taskId }, '1.1')).result as Record<string, unknown>;
    assert.equal(v11.generation, String(now));
    const v10 = (await jsonRpc('GetTask', { id: taskId }, '1.0')).result as Record<string, unknown>;
    assert.equal('generation' in v10, false);
    assert.equal((v10.metadata as Record<string, unknown>)[GENERATION_KEY], now);
  });

  it('issue 36: GetTask with currentGeneration answers once the generation passes it', async () => {
    const now = await generationNow();
    const waiting = jsonRpc('GetTask', { id: taskId, currentGeneration: String(now) }, '1.1');
    await jsonRpc('SendMessage', { message: userMessage('/help', { taskId }) }, '1.0');
    const task = (await waiting).result as { generation: string };
    assert.ok(Number(task.generation) > now);
  });

  it('issue 36: a send with a stale ifGenerationMatch is refused with -32010; with the current one it runs', async () => {
    const now = await generationNow();
    const stale = await jsonRpc(
      'SendMessage',
      { message: userMessage('again', { taskId }), configuration: { ifGenerationMatch: String(now - 1) } },
      '1.1',
    );
    assert.equal(stale.error?.code, -32010);
    assert.equal(await generationNow(), now, 'nothing written');
    const current = await jsonRpc(
      'SendMessage',
      { message: userMessage('again', { taskId }), configuration: { ifGenerationMatch: String(now) } },
      '1.1',
    );
    assert.equal(current.error, undefined);
    assert.ok((await generationNow()) > now);
  });
});

describe('A2A 1.1 generations over HTTP+JSON', () => {
  it('issue 36: a 1.1 GetTask has generation as a field; a 1.0 one beside it does not', async () => {
    const now = await generationNow();
    assert.equal((await rest(`/tasks/${taskId}`, '1.1')).body.generation, String(now));
    assert.equal('generation' in (await rest(`/tasks/${taskId}`, '1.0')).body, false);
  });

  it('issue 36: GetTask with currentGeneration (a query parameter) answers once the generation passes it', async () => {
    const now = await generationNow();
    const waiting = rest(`/tasks/${taskId}?currentGeneration=${now}`, '1.1');
    await jsonRpc('SendMessage', { message: userMessage('/help', { taskId }) }, '1.0');
    assert.ok(Number((await waiting).body.generation) > now);
  });

  it('issue 36: a send with a stale ifGenerationMatch is refused with 409; with the current one it runs', async () => {
    const now = await generationNow();
    const send = (match: number) =>
      rest('/message:send', '1.1', {
        message: userMessage('again', { taskId }),
        configuration: { ifGenerationMatch: String(match) },
      });
    assert.equal((await send(now - 1)).status, 409);
    assert.equal((await send(now)).status, 200);
  });
});

describe('A2A 1.1 generations over gRPC', () => {
  it('issue 36: a 1.1 GetTask has generation (field 7); a 1.0 one beside it does not', async () => {
    const now = await generationNow();
    const v11 = await rawUnaryCall(h.harness.grpcAddress!, 'GetTask', getTaskBytes(), '1.1');
    assert.equal(v11.code, grpcStatus.OK, v11.details);
    assert.equal(varintField(v11.response!, 7), now);
    const v10 = await rawUnaryCall(h.harness.grpcAddress!, 'GetTask', getTaskBytes(), '1.0');
    assert.equal(varintField(v10.response!, 7), undefined);
  });

  it('issue 36: GetTask with currentGeneration answers once the generation passes it', async () => {
    const now = await generationNow();
    const waiting = rawUnaryCall(h.harness.grpcAddress!, 'GetTask', getTaskBytes(now), '1.1');
    await jsonRpc('SendMessage', { message: userMessage('/help', { taskId }) }, '1.0');
    const answer = await waiting;
    assert.equal(answer.code, grpcStatus.OK, answer.details);
    assert.ok(varintField(answer.response!, 7)! > now);
  });

  it('issue 36: a send with a stale ifGenerationMatch is refused ABORTED; with the current one it runs', async () => {
    const now = await generationNow();
    const stale = await rawUnaryCall(h.harness.grpcAddress!, 'SendMessage', sendBytes('again', now - 1), '1.1');
    assert.equal(stale.code, grpcStatus.ABORTED, stale.details);
    const current = await rawUnaryCall(h.harness.grpcAddress!, 'SendMessage', sendBytes('again', now), '1.1');
    assert.equal(current.code, grpcStatus.OK, current.details);
    assert.ok((await generationNow()) > now);
  });
});
