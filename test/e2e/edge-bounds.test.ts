/**
 * One schema at the edge, the same on every transport (src/server/edge-schema.ts): a request
 * out of bounds or of the wrong type is refused with the protocol's malformed-request error
 * (JSON-RPC -32602, HTTP+JSON 400, gRPC INVALID_ARGUMENT) before the SDK copies it, and the
 * server keeps serving. The bound cases go through the SDK's own client on all three
 * transports; the type cases, which no typed client can send, as raw JSON.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Message } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { EDGE_LIMITS } from '../../src/server/edge-schema.js';
import { send, startTestHarness, textPart, TRANSPORTS, userMessage, type TestHarness } from './support.js';

let h: TestHarness;
before(async () => {
  h = await startTestHarness();
});
after(async () => {
  await h?.close();
});

/** Metadata nested `depth` objects deep. */
function deepMetadata(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) value = { inner: value };
  return value;
}

const OUT_OF_BOUNDS: Array<{ name: string; message: () => Message; field: RegExp }> = [
  {
    name: `more than ${EDGE_LIMITS.parts} parts (the 340,000 empty parts that stalled the server)`,
    message: () => ({ ...userMessage(''), parts: Array.from({ length: EDGE_LIMITS.parts + 1 }, () => textPart('')) }),
    field: /parts/,
  },
  {
    name: `more than ${EDGE_LIMITS.textChars} characters of text`,
    message: () => ({ ...userMessage(''), parts: [textPart('x'.repeat(EDGE_LIMITS.textChars / 2 + 1)), textPart('y'.repeat(EDGE_LIMITS.textChars / 2))] }),
    field: /text/,
  },
  { name: `a messageId over ${EDGE_LIMITS.idChars} characters`, message: () => userMessage('Hi', { messageId: 'm'.repeat(EDGE_LIMITS.idChars + 1) }), field: /messageId/ },
  {
    name: `more than ${EDGE_LIMITS.referenceTaskIds} reference task ids`,
    message: () => ({ ...userMessage('Hi'), referenceTaskIds: Array.from({ length: EDGE_LIMITS.referenceTaskIds + 1 }, () => randomUUID()) }),
    field: /referenceTaskIds/,
  },
  { name: `metadata nested more than ${EDGE_LIMITS.depth} deep`, message: () => ({ ...userMessage("Hi"), metadata: deepMetadata(EDGE_LIMITS.depth + 20) }), field: /deep|nest/i },
];

for (const transport of TRANSPORTS) {
  describe(`the edge bounds over ${transport}`, () => {
    for (const { name, message, field } of OUT_OF_BOUNDS) {
      it(`${name} is a malformed request naming the field, and nothing reaches the model`, async () => {
        const client = await h.client(transport);
        const before = h.chatRequests().length;
        await assert.rejects(client.sendMessage({ tenant: '', message: message(), configuration: undefined, metadata: {} }), (error: unknown) => {
          assert.ok(error instanceof RequestMalformedError, `expected RequestMalformedError, got ${String(error)}`);
          assert.match(error.message, field);
          assert.ok(error.message.length < 500, 'the refusal does not repeat the input');
          return true;
        });
        assert.equal(h.chatRequests().length, before);
        assert.equal((await send(client, '/help')).status?.message?.metadata?.command, 'help', 'the server keeps serving');
      });
    }

    it(`a message at the bounds (${EDGE_LIMITS.parts} parts) is accepted`, async () => {
      const client = await h.client(transport);
      const message = { ...userMessage(''), parts: Array.from({ length: EDGE_LIMITS.parts }, (_, i) => textPart(`part ${i} `)) };
      const task = await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} });
      assert.ok('status' in task);
    });
  });
}

describe('the edge schema refuses wrong types instead of coercing them (raw JSON)', () => {
  const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' };
  const rpc = async (body: unknown) => {
    const res = await fetch(`${h.harness.url}/a2a/jsonrpc`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
    return (await res.json()) as { error?: { code: number; message: string }; result?: unknown };
  };
  const rest = async (path: string, init: { method?: string; body?: unknown } = {}) => {
    const res = await fetch(`${h.harness.url}/a2a/rest${path}`, {
      method: init.method ?? 'POST',
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, body: (await res.json()) as { error?: { code: number; status?: string; message: string } } };
  };
  const message = (extra: Record<string, unknown>) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'Hi' }], ...extra });
  const INVALID_PARAMS = -32602;

  const WRONG_TYPES: Array<{ name: string; method: string; params: Record<string, unknown>; restPath: string; restMethod?: string; field: RegExp }> = [
    { name: 'a text part whose text is an object', method: 'SendMessage', params: { message: message({ parts: [{ text: { a: 1 } }] }) }, restPath: '/message:send', field: /text/ },
    { name: 'a numeric messageId', method: 'SendMessage', params: { message: message({ messageId: 42 }) }, restPath: '/message:send', field: /messageId/ },
    {
      name: 'historyLength "x"',
      method: 'SendMessage',
      params: { message: message({}), configuration: { historyLength: 'x' } },
      restPath: '/message:send',
      field: /historyLength/,
    },
    {
      name: 'historyLength -1',
      method: 'SendMessage',
      params: { message: message({}), configuration: { historyLength: -1 } },
      restPath: '/message:send',
      field: /historyLength/,
    },
  ];

  for (const { name, method, params, restPath, field } of WRONG_TYPES) {
    it(`${name}: JSON-RPC -32602 and HTTP+JSON 400 INVALID_ARGUMENT, each naming the field`, async () => {
      const viaRpc = await rpc({ jsonrpc: '2.0', id: 1, method, params });
      assert.equal(viaRpc.error?.code, INVALID_PARAMS);
      assert.match(viaRpc.error!.message, field);
      const viaRest = await rest(restPath, { body: params });
      assert.equal(viaRest.status, 400);
      assert.equal(viaRest.body.error?.status, 'INVALID_ARGUMENT');
      assert.match(viaRest.body.error!.message, field);
    });
  }

  it('GetTask with historyLength -1 is refused on both transports alike', async () => {
    const created = (await rpc({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: message({ parts: [{ text: '/help' }] }) } })) as { result?: { task?: { id: string } } };
    const id = created.result!.task!.id;
    assert.equal((await rpc({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id, historyLength: -1 } })).error?.code, INVALID_PARAMS);
    assert.equal((await rest(`/tasks/${id}?historyLength=-1`, { method: 'GET' })).status, 400);
  });

  it('a JSON-RPC batch is an invalid request (-32600), as JSON-RPC 2.0 says', async () => {
    const answer = await rpc([{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }]);
    assert.equal(answer.error?.code, -32600);
  });

  it('a task path that is not valid percent-encoding says so, not that the body is bad JSON', async () => {
    const res = await fetch(`${h.harness.url}/a2a/rest/tasks/%ff`, { headers, signal: AbortSignal.timeout(10_000) });
    const body = (await res.json()) as { error: { message: string } };
    assert.equal(res.status, 400);
    assert.match(body.error.message, /percent-encoding/);
    assert.doesNotMatch(body.error.message, /JSON/);
  });
});

describe('gRPC: a request nested deeper than any client would build is refused before it is decoded', () => {
  /** A varint, as protobuf writes lengths. */
  function varint(value: number): number[] {
    const bytes: number[] = [];
    while (value > 0x7f) {
      bytes.push((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    bytes.push(value);
    return bytes;
  }
  const field = (tag: number, body: Buffer) => Buffer.concat([Buffer.from([tag, ...varint(body.length)]), body]);
  /** `google.protobuf.Struct` `{"k": {"k": ... true}}`, `depth` structs deep, built as bytes (the SDK's encoder recurses). */
  function deepStruct(depth: number): Buffer {
    let value = Buffer.from([0x20, 0x01]); // Value.bool_value = true
    let struct = Buffer.alloc(0);
    for (let i = 0; i < depth; i++) {
      struct = field(0x0a, Buffer.concat([field(0x0a, Buffer.from('k')), field(0x12, value)])); // Struct.fields["k"] = value
      value = field(0x2a, struct); // Value.struct_value = struct
    }
    return struct;
  }

  for (const depth of [1500, 5000]) {
    it(`metadata ${depth} levels deep is INVALID_ARGUMENT, not an internal stack overflow`, async () => {
      const { A2AService } = await import('@a2a-js/sdk/server/grpc');
      const grpc = await import('@grpc/grpc-js');
      const head = Buffer.from(A2AService.sendMessage.requestSerialize({ tenant: '', message: userMessage('Hi'), configuration: undefined, metadata: undefined }));
      const request = Buffer.concat([head, field(0x22, deepStruct(depth))]); // SendMessageRequest.metadata
      const client = new grpc.Client(h.harness.grpcAddress!, grpc.credentials.createInsecure());
      try {
        const metadata = new grpc.Metadata();
        metadata.set('a2a-version', '1.0');
        const error = await new Promise<{ code: number; details: string } | null>((resolve) => {
          client.makeUnaryRequest(A2AService.sendMessage.path, (bytes: Buffer) => bytes, (bytes: Buffer) => bytes, request, metadata, (failure) => resolve(failure));
        });
        assert.equal(error?.code, grpc.status.INVALID_ARGUMENT);
        assert.doesNotMatch(error!.details, /stack/i);
      } finally {
        client.close();
      }
    });
  }
});
