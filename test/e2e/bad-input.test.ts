/**
 * Bad input at the edge: malformed or hostile requests over raw `fetch`, on JSON-RPC and
 * HTTP+JSON, and as raw bytes over gRPC. Each must get a clear protocol error (JSON, the right
 * code, no stack trace, no file path, no raw runtime error), never a hang, and the server must
 * answer a `/help` command afterwards. Every fetch is bounded so that a hang fails instead of
 * stalling the run. Then one table of invalid params, sent with the SDK's client over all
 * three transports, each refused as the SDK's `RequestMalformedError` (server/edge-schema.ts).
 *
 * HTTP+JSON paths: in @a2a-js/sdk 1.3.0 the 1.0 routes are `/message:send`, `/tasks/:id`, …
 * under the REST base, with an optional tenant segment in front (`/v1/message:send` is
 * read as tenant "v1"); the SDK's own 1.0 client calls them without a prefix, and so do we.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, type Message, type SendMessageRequest, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { status as grpcStatus } from '@grpc/grpc-js';
import { deepMetadataRequest, rawUnaryCall } from '../fixtures/raw-grpc.js';
import {
  collect,
  send,
  startTestHarness,
  textPart,
  TRANSPORTS,
  userMessage,
  type TestHarness,
  type TransportName,
} from './support.js';

const TIMEOUT_MS = 5000;
const HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0' } as const;

/** JSON-RPC 2.0 and A2A error codes asserted below. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602; // also what SDK 1.3.0 maps its RequestMalformedError to
const INTERNAL_ERROR = -32603;
const TASK_NOT_FOUND = -32001;
const VERSION_NOT_SUPPORTED = -32009;

let h: TestHarness;

before(async () => {
  h = await startTestHarness();
});

after(async () => {
  await h?.close();
});

interface Reply {
  status: number;
  contentType: string;
  text: string;
  json: any;
}

async function request(
  path: string,
  init: { method?: string; body?: BodyInit; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const res = await fetch(`${h.harness.url}${path}`, {
    method: init.method ?? 'POST',
    headers: init.headers ?? HEADERS,
    body: init.body,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, json };
}

const jsonRpc = (body: BodyInit, headers?: Record<string, string>) => request('/a2a/jsonrpc', { body, headers });
const rpc = (method: string, params: unknown, headers?: Record<string, string>) =>
  jsonRpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), headers);
const rest = (path: string, init: { method?: string; body?: BodyInit; headers?: Record<string, string> } = {}) =>
  request(`/a2a/rest${path}`, init);

function message(text: string, extra: Record<string, unknown> = {}) {
  return { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra };
}

/** Nested arrays `depth` levels deep, as JSON text (JSON.stringify would recurse). */
function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** `before`, then bytes that are not UTF-8, then `after`. */
function withInvalidUtf8(before: string, bytes: number[], after: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array([...Buffer.from(before), ...bytes, ...Buffer.from(after)]);
}

/** JSON, and nothing of the server's insides: no stack frame, no file path, no raw runtime error. */
function assertClean(reply: Reply): void {
  assert.match(
    reply.contentType,
    /json/,
    `not JSON (${reply.status} ${reply.contentType}): ${reply.text.slice(0, 300)}`,
  );
  assert.notEqual(reply.json, undefined, `the body does not parse as JSON: ${reply.text.slice(0, 300)}`);
  for (const leak of [/\n\s*at\s/, /\bat .+:\d+:\d+/, /\/work\//, /node_modules/, /file:\/\//, /\.[cm]?[jt]s:\d+/]) {
    assert.doesNotMatch(reply.text, leak, `the body leaks internals: ${reply.text.slice(0, 500)}`);
  }
  assert.ok(!reply.text.includes(process.cwd()), 'the body names the working directory');
  assert.doesNotMatch(
    reply.text,
    /\b(RangeError|TypeError|ReferenceError|SyntaxError)\b|Maximum call stack/,
    `a raw runtime error: ${reply.text.slice(0, 300)}`,
  );
}

/** A JSON-RPC error response whose code is one of `codes`; returns the error. */
function assertRpcError(
  reply: Reply,
  codes: number | number[],
  options: { status?: number; id?: unknown } = {},
): { code: number; message: string } {
  assertClean(reply);
  const wanted = Array.isArray(codes) ? codes : [codes];
  assert.equal(reply.status, options.status ?? 200, `HTTP status: ${reply.text.slice(0, 300)}`);
  assert.equal(reply.json?.jsonrpc, '2.0', `not a JSON-RPC response: ${reply.text.slice(0, 300)}`);
  assert.ok(!('result' in reply.json), `expected an error, got a result: ${reply.text.slice(0, 300)}`);
  const error = reply.json.error;
  assert.equal(typeof error?.code, 'number', `no error code: ${reply.text.slice(0, 300)}`);
  assert.equal(typeof error.message, 'string');
  assert.ok(
    wanted.includes(error.code),
    `error code ${error.code}, expected ${wanted.join(' or ')}: ${reply.text.slice(0, 300)}`,
  );
  if ('id' in options) assert.equal(reply.json.id, options.id);
  return error;
}

/** An HTTP+JSON error: the status, and `{error: {code: status, message}}`. */
function assertRestError(reply: Reply, status: number): void {
  assertClean(reply);
  assert.equal(reply.status, status, `HTTP status ${reply.status}, expected ${status}: ${reply.text.slice(0, 300)}`);
  assert.equal(reply.json?.error?.code, status, `error body: ${reply.text.slice(0, 300)}`);
  assert.equal(typeof reply.json.error.message, 'string');
}

/** The server still works: `/help` over JSON-RPC returns a task carrying the help reply. */
async function assertAlive(): Promise<void> {
  const reply = await rpc('SendMessage', { message: message('/help') });
  assert.equal(reply.status, 200, reply.text.slice(0, 300));
  const task = reply.json?.result?.task;
  assert.ok(task?.id, `no task in the /help reply: ${reply.text.slice(0, 300)}`);
  assert.deepEqual(task.status?.message?.metadata, { command: 'help' });
}

describe('bad input over JSON-RPC', () => {
  it('malformed JSON is a parse error (-32700)', async () => {
    assertRpcError(await jsonRpc('{"jsonrpc": "2.0", "id": 1, "method": '), PARSE_ERROR, { id: null });
    await assertAlive();
  });

  it('a JSON body that is not an object is refused as an invalid request', async () => {
    // The body parser in front (strict) reads a bare scalar as a parse failure (-32700).
    for (const body of ['42', 'null', 'true', '"SendMessage"']) {
      assertRpcError(await jsonRpc(body), [PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS], { id: null });
    }
    await assertAlive();
  });

  it('a batch is an invalid request (-32600), as JSON-RPC 2.0 says, not invalid params', async () => {
    for (const body of [
      '[]',
      JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: message('/help') } }]),
    ]) {
      const error = assertRpcError(await jsonRpc(body), INVALID_REQUEST, { id: null });
      assert.match(error.message, /Batch requests are not supported/);
    }
    await assertAlive();
  });

  it('an envelope without jsonrpc "2.0", with an id of the wrong type, or without a method is -32600', async () => {
    for (const envelope of [
      { id: 1, method: 'GetTask' },
      { jsonrpc: '2.0', id: { a: 1 }, method: 'GetTask' },
      { jsonrpc: '2.0', id: 'x'.repeat(200), method: 'GetTask' },
      { jsonrpc: '2.0', id: 1 },
    ]) {
      const error = assertRpcError(
        await jsonRpc(JSON.stringify({ ...envelope, params: { id: 'x' } })),
        INVALID_REQUEST,
        { id: null },
      );
      assert.match(error.message, /^(jsonrpc|id|method) /);
    }
    await assertAlive();
  });

  it('a body over the limit is answered 413 with a JSON-RPC error', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: message('x'.repeat(5 * 1024 * 1024)) },
    });
    assertRpcError(await jsonRpc(body), INVALID_REQUEST, { status: 413, id: null });
    await assertAlive();
  });

  it('an unknown method is -32601', async () => {
    assertRpcError(await rpc('NoSuchMethod', {}), METHOD_NOT_FOUND, { id: 1 });
    assertRpcError(await rpc('message/send', { message: message('/help') }), METHOD_NOT_FOUND, { id: 1 });
    await assertAlive();
  });

  it('a request without the A2A-Version header is a JSON-RPC error, not a crash', async () => {
    assertRpcError(
      await rpc('SendMessage', { message: message('/help') }, { 'content-type': 'application/json' }),
      VERSION_NOT_SUPPORTED,
    );
    await assertAlive();
  });

  describe('params of the wrong type are invalid params (-32602)', () => {
    it('message.parts a string', async () => {
      assertRpcError(await rpc('SendMessage', { message: message('hello', { parts: 'hello' }) }), INVALID_PARAMS, {
        id: 1,
      });
      await assertAlive();
    });

    it('message.role a number out of range', async () => {
      assertRpcError(await rpc('SendMessage', { message: message('hello', { role: 99 }) }), INVALID_PARAMS, { id: 1 });
      await assertAlive();
    });

    it('message.messageId missing', async () => {
      const { messageId: _, ...noId } = message('/help');
      assertRpcError(await rpc('SendMessage', { message: noId }), INVALID_PARAMS, { id: 1 });
      const { messageId: __, ...noIdText } = message('hello');
      assertRpcError(await rpc('SendMessage', { message: noIdText }), INVALID_PARAMS, { id: 1 });
      await assertAlive();
    });

    it('a part whose text is an object, not stored as "[object Object]"', async () => {
      const error = assertRpcError(
        await rpc('SendMessage', { message: message('hello', { parts: [{ text: { a: 1 } }] }) }),
        INVALID_PARAMS,
        { id: 1 },
      );
      assert.equal(error.message, 'message.parts[0].text must be a string.');
      await assertAlive();
    });

    it('a numeric messageId', async () => {
      const error = assertRpcError(
        await rpc('SendMessage', { message: message('/help', { messageId: 42 }) }),
        INVALID_PARAMS,
        { id: 1 },
      );
      assert.match(error.message, /^message\.messageId must be a string/);
      await assertAlive();
    });

    it('historyLength "x" or -1 on GetTask, rather than the whole history', async () => {
      const task = (await rpc('SendMessage', { message: message('/help') })).json.result.task;
      for (const historyLength of ['x', -1, 2.5]) {
        const error = assertRpcError(await rpc('GetTask', { id: task.id, historyLength }), INVALID_PARAMS, { id: 1 });
        assert.match(error.message, /^historyLength must be a whole number from 0 to 2147483647/);
      }
      assert.equal(
        (await rpc('GetTask', { id: task.id, historyLength: '1' })).json.result.history.length,
        1,
        'a number in a string is ProtoJSON',
      );
      await assertAlive();
    });

    it('an id of 100,000 characters is refused without being repeated back', async () => {
      const reply = await rpc('GetTask', { id: 'x'.repeat(100_000) });
      const error = assertRpcError(reply, INVALID_PARAMS, { id: 1 });
      assert.equal(error.message, 'id must be at most 128 characters.');
      assert.ok(reply.text.length < 1000, `a reply of ${reply.text.length} characters`);
      await assertAlive();
    });

    it('params an array, or no message at all', async () => {
      assertRpcError(await rpc('SendMessage', [message('/help')]), INVALID_PARAMS, { id: 1 });
      assertRpcError(await rpc('SendMessage', {}), INVALID_PARAMS, { id: 1 });
      await assertAlive();
    });
  });

  it('GetTask of an unknown id is TaskNotFound (-32001); of an empty id, invalid params', async () => {
    assertRpcError(await rpc('GetTask', { id: randomUUID() }), TASK_NOT_FOUND, { id: 1 });
    assertRpcError(await rpc('GetTask', { id: '' }), [INVALID_PARAMS, TASK_NOT_FOUND], { id: 1 });
    await assertAlive();
  });

  it('CancelTask of an unknown id is TaskNotFound (-32001)', async () => {
    assertRpcError(await rpc('CancelTask', { id: randomUUID() }), TASK_NOT_FOUND, { id: 1 });
    await assertAlive();
  });

  it('a message to an unknown taskId is TaskNotFound (-32001), command or not', async () => {
    for (const text of ['/help', 'hello']) {
      assertRpcError(await rpc('SendMessage', { message: message(text, { taskId: randomUUID() }) }), TASK_NOT_FOUND, {
        id: 1,
      });
    }
    await assertAlive();
  });

  it('deeply nested JSON (10,000 levels in metadata) is refused as a client error', async () => {
    for (const text of ['/help', 'hello']) {
      const body = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":"${text}"}],"metadata":{"deep":${nested(10_000)}}}}}`;
      const error = assertRpcError(await jsonRpc(body), [PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS]);
      assert.notEqual(error.code, INTERNAL_ERROR);
    }
    await assertAlive();
  });

  it('a message nested 2,000 levels deep is refused before any model call', async () => {
    const calls = h.chatRequests().length;
    const body = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":"hello"}],"metadata":{"deep":${nested(2_000)}}}}}`;
    const reply = await jsonRpc(body);
    // A turn sent after the refusal, to its end: a turn the refused request had started in the
    // background would have reached the model before this one.
    const marker = await rpc('SendMessage', { message: message('after the refusal') });
    assert.equal(marker.json?.result?.task?.status?.state, 'TASK_STATE_INPUT_REQUIRED', marker.text.slice(0, 300));
    const sent = h
      .chatRequests()
      .slice(calls)
      .map((body) => JSON.stringify(body.messages.at(-1)));
    assert.equal(sent.length, 1, `the model was called for a request that was refused (${reply.text.slice(0, 200)})`);
    assert.match(sent[0]!, /after the refusal/);
    const error = assertRpcError(reply, [PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS]);
    assert.notEqual(error.code, INTERNAL_ERROR);
    await assertAlive();
  });

  it('invalid UTF-8 bytes are no crash: inside a string they are replaced, between tokens they are a parse error', async () => {
    const bytes = (before: string, after: string) => withInvalidUtf8(before, [0xff, 0xfe, 0xc3, 0x28], after);
    const inString = await jsonRpc(
      bytes(
        `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":"/help `,
        '"}]}}}',
      ),
    );
    assertClean(inString);
    assert.equal(inString.status, 200, inString.text.slice(0, 300));
    assert.equal(inString.json.jsonrpc, '2.0');
    if (inString.json.error) assert.notEqual(inString.json.error.code, INTERNAL_ERROR, inString.text.slice(0, 300));
    else
      assert.deepEqual(
        inString.json.result?.task?.status?.message?.metadata,
        { command: 'help' },
        'a reply to /help with a garbled argument',
      );
    assertRpcError(await jsonRpc(bytes('{"jsonrpc":"2.0","id":1,', '"method":"SendMessage"}')), PARSE_ERROR, {
      id: null,
    });
    await assertAlive();
  });
});

describe('bad input over HTTP+JSON', () => {
  it('malformed JSON is 400', async () => {
    assertRestError(await rest('/message:send', { body: '{"message": ' }), 400);
    await assertAlive();
  });

  it('a JSON body that is not an object is 400', async () => {
    for (const body of ['[]', '42', 'null', '"hello"']) assertRestError(await rest('/message:send', { body }), 400);
    await assertAlive();
  });

  it('a body over the limit is 413 with a JSON body', async () => {
    assertRestError(
      await rest('/message:send', { body: JSON.stringify({ message: message('x'.repeat(5 * 1024 * 1024)) }) }),
      413,
    );
    await assertAlive();
  });

  it('a request without the A2A-Version header is a 4xx JSON error', async () => {
    assertRestError(
      await rest('/message:send', {
        body: JSON.stringify({ message: message('/help') }),
        headers: { 'content-type': 'application/json' },
      }),
      400,
    );
    await assertAlive();
  });

  describe('params of the wrong type are 400', () => {
    it('message.parts a string', async () => {
      assertRestError(
        await rest('/message:send', { body: JSON.stringify({ message: message('hello', { parts: 'hello' }) }) }),
        400,
      );
      await assertAlive();
    });

    it('message.role a number out of range', async () => {
      assertRestError(
        await rest('/message:send', { body: JSON.stringify({ message: message('hello', { role: 99 }) }) }),
        400,
      );
      await assertAlive();
    });

    it('message.messageId missing', async () => {
      const { messageId: _, ...noId } = message('/help');
      assertRestError(await rest('/message:send', { body: JSON.stringify({ message: noId }) }), 400);
      await assertAlive();
    });

    it('a part whose text is an object, and a numeric messageId', async () => {
      for (const [bad, field] of [
        [message('hello', { parts: [{ text: { a: 1 } }] }), 'message.parts[0].text'],
        [message('/help', { messageId: 42 }), 'message.messageId'],
      ] as const) {
        const reply = await rest('/message:send', { body: JSON.stringify({ message: bad }) });
        assertRestError(reply, 400);
        assert.equal(reply.json.error.status, 'INVALID_ARGUMENT');
        assert.ok(reply.json.error.message.startsWith(`${field} must be a string`), reply.json.error.message);
      }
      await assertAlive();
    });

    it('historyLength "x", "5x" or -1 in the query', async () => {
      const task = (await rpc('SendMessage', { message: message('/help') })).json.result.task;
      for (const historyLength of ['x', '5x', '-1']) {
        const reply = await rest(`/tasks/${task.id}?historyLength=${historyLength}`, { method: 'GET' });
        assertRestError(reply, 400);
        assert.match(reply.json.error.message, /^historyLength must be a whole number/);
      }
      const listed = await rest('/tasks?pageSize=0', { method: 'GET' });
      assertRestError(listed, 400);
      assert.match(listed.json.error.message, /^pageSize must be a whole number from 1 to 100/);
      await assertAlive();
    });
  });

  it('a task id that is not valid percent-encoding is a 400 about the path, not about JSON', async () => {
    for (const path of ['/tasks/%ff', '/tasks/%ff:cancel']) {
      const reply = await rest(path, {
        method: path.endsWith(':cancel') ? 'POST' : 'GET',
        body: path.endsWith(':cancel') ? '{}' : undefined,
      });
      assertRestError(reply, 400);
      assert.match(reply.json.error.message, /path is not valid percent-encoding/);
    }
    await assertAlive();
  });

  it('GET and cancel of an unknown task are 404', async () => {
    assertRestError(await rest(`/tasks/${randomUUID()}`, { method: 'GET' }), 404);
    assertRestError(await rest(`/tasks/${randomUUID()}:cancel`, { body: '{}' }), 404);
    await assertAlive();
  });

  it('an unknown path is 404 with a JSON body', async () => {
    assertRestError(await rest('/no/such/route', { method: 'GET' }), 404);
    assertRestError(await rest('/message:explode', { body: '{}' }), 404);
    assertRestError(await request('/no-such-path', { method: 'GET', headers: {} }), 404);
    await assertAlive();
  });

  it('a message to an unknown taskId is 404', async () => {
    for (const text of ['/help', 'hello']) {
      assertRestError(
        await rest('/message:send', { body: JSON.stringify({ message: message(text, { taskId: randomUUID() }) }) }),
        404,
      );
    }
    await assertAlive();
  });

  it('CancelTask metadata past 100,000 characters is 400, the field named (issue 22, item 6)', async () => {
    const reply = await rest('/tasks/t-1:cancel', {
      body: JSON.stringify({ metadata: { note: 'x'.repeat(100_000) } }),
    });
    assertRestError(reply, 400);
    assert.match(reply.json.error.message, /^metadata takes the request's metadata past 100000 characters/);
  });

  it('deeply nested JSON (10,000 levels in metadata) is 400', async () => {
    const body = `{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":"/help"}],"metadata":{"deep":${nested(10_000)}}}}`;
    assertRestError(await rest('/message:send', { body }), 400);
    await assertAlive();
  });

  it('invalid UTF-8 bytes between tokens are 400', async () => {
    const body = withInvalidUtf8('{"message":', [0xff, 0xfe], '{}}');
    assertRestError(await rest('/message:send', { body }), 400);
    await assertAlive();
  });
});

describe('bad input over gRPC', () => {
  it('metadata nested 1,500, 2,000 or 200,000 levels deep is INVALID_ARGUMENT, as HTTP refuses it, before it is decoded', async () => {
    for (const depth of [1_500, 2_000, 200_000]) {
      const { code, details } = await rawUnaryCall(h.harness.grpcAddress!, 'SendMessage', deepMetadataRequest(depth));
      assert.equal(code, grpcStatus.INVALID_ARGUMENT, `depth ${depth}: ${code} ${details}`);
      assert.match(details, /more than 100 levels deep/);
      assert.doesNotMatch(details, /Maximum call stack|deserializ/i);
    }
    await assertAliveOn(await h.client('GRPC'));
  });

  it('bytes that are not protobuf, or are cut short, are INVALID_ARGUMENT, not INTERNAL (issue 22, item 8)', async () => {
    const malformed: Array<[string, string, Buffer]> = [
      ['garbage', 'SendMessage', Buffer.from([0xff, 0xff, 0xff, 0x01, 0x02])],
      ['a truncated SendMessageRequest', 'SendMessage', deepMetadataRequest(3).subarray(0, 20)],
      ['a message field promising 64 bytes and holding 1', 'SendStreamingMessage', Buffer.from([0x12, 0x40, 0x0a])],
      ['a truncated GetTaskRequest', 'GetTask', Buffer.from([0x12, 0x05, 0x78])],
    ];
    for (const [what, method, bytes] of malformed) {
      const { code, details } = await rawUnaryCall(h.harness.grpcAddress!, method, bytes);
      assert.equal(code, grpcStatus.INVALID_ARGUMENT, `${what}: ${code} ${details}`);
      assert.equal(details, `The ${method} request is not valid protobuf (malformed or truncated bytes).`);
    }
    await assertAliveOn(await h.client('GRPC'));
  });

  it('metadata just past the bound, decoded, is refused with the field named', async () => {
    // message.metadata is at level 2 of the request; 98 levels below it reach level 100.
    const { code, details } = await rawUnaryCall(h.harness.grpcAddress!, 'SendMessage', deepMetadataRequest(98));
    assert.equal(code, grpcStatus.INVALID_ARGUMENT, details);
    assert.match(details, /^message\.metadata\.a\.a nests objects and arrays more than 100 levels deep/);
    await assertAliveOn(await h.client('GRPC'));
  });
});

describe('what the harness does not support, over gRPC, as A2A 1.0.1 section 5.4 maps it (issue 22, item 3)', () => {
  // Push notifications are served since issue 24 (test/e2e/push.test.ts); an empty request is invalid params.
  it('issue 24: a push-notification call without a task id is INVALID_ARGUMENT', async () => {
    const { code, details } = await rawUnaryCall(
      h.harness.grpcAddress!,
      'CreateTaskPushNotificationConfig',
      Buffer.alloc(0),
    );
    assert.equal(code, grpcStatus.INVALID_ARGUMENT, details);
    assert.match(details, /taskId is required/);
  });

  it('an unsupported protocol version is FAILED_PRECONDITION, naming the version to send', async () => {
    const getTask = Buffer.from([18, 1, 120]); // GetTaskRequest { id: "x" }
    const { code, details } = await rawUnaryCall(h.harness.grpcAddress!, 'GetTask', getTask, '0.9');
    assert.equal(code, grpcStatus.FAILED_PRECONDITION, details);
    assert.match(
      details,
      /version '0\.9' is not supported: this server speaks A2A 1\.0 and 1\.1; send the header `A2A-Version: 1\.0` or/,
    );
  });
});

/** The server still works on this client's transport. */
async function assertAliveOn(client: Client): Promise<void> {
  const task = await send(client, '/help');
  assert.deepEqual(task.status?.message?.metadata, { command: 'help' });
}

function sendParams(message: Partial<Message>, extra: Partial<SendMessageRequest> = {}): SendMessageRequest {
  return {
    tenant: '',
    message: { ...userMessage('hello'), ...message },
    configuration: undefined,
    metadata: {},
    ...extra,
  };
}

/** A push-notification config to a webhook on the public internet, `extra` over it. */
function pushConfig(extra: Partial<TaskPushNotificationConfig> = {}): TaskPushNotificationConfig {
  return {
    tenant: '',
    id: '',
    taskId: '',
    url: 'https://example.com/hook',
    token: '',
    authentication: undefined,
    ...extra,
  };
}

/** `{a: {a: ... 1}}`, `levels` objects deep. */
function deepObject(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

const parts = (n: number) => Array.from({ length: n }, (_, i) => textPart(`part ${i}`));
const long = (n: number) => 'x'.repeat(n);

/**
 * Invalid params that every transport can carry, each with the field its refusal must name.
 * One table, sent with the SDK's own client over JSON-RPC, HTTP+JSON and gRPC.
 */
const INVALID: Array<{
  name: string;
  field: RegExp;
  call: (client: Client) => Promise<unknown>;
  /** A transport whose SDK client cannot send it (tested with raw requests instead). */
  notOn?: TransportName;
}> = [
  {
    name: 'a message at the parts bound + 1 (101 parts)',
    field: /message\.parts must hold at most 100 parts/,
    call: (c) => c.sendMessage(sendParams({ parts: parts(101) })),
  },
  {
    name: 'the same, streamed',
    field: /message\.parts must hold at most 100 parts/,
    call: (c) => collect(c.sendMessageStream(sendParams({ parts: parts(101) }))),
  },
  {
    name: 'more than 1,000,000 characters of text',
    field: /message\.parts hold 1000001 characters/,
    call: (c) => c.sendMessage(sendParams({ parts: [textPart(long(600_000)), textPart(long(400_001))] })),
  },
  {
    name: 'no parts',
    field: /message\.parts is required: an array of parts/,
    call: (c) => c.sendMessage(sendParams({ parts: [] })),
  },
  {
    name: 'a part with no content',
    field: /message\.parts\[0\] must hold one of text/,
    call: (c) =>
      c.sendMessage(sendParams({ parts: [{ content: undefined, metadata: {}, filename: '', mediaType: '' }] })),
  },
  {
    name: 'an agent message',
    field: /message\.role must be "ROLE_USER"/,
    call: (c) => c.sendMessage(sendParams({ role: Role.ROLE_AGENT })),
  },
  {
    name: 'a messageId of 129 characters',
    field: /message\.messageId must be at most 128/,
    call: (c) => c.sendMessage(sendParams({ messageId: long(129) })),
  },
  {
    name: 'a contextId of 129 characters',
    field: /message\.contextId must be at most 128/,
    call: (c) => c.sendMessage(sendParams({ contextId: long(129) })),
  },
  {
    name: '33 extensions',
    field: /message\.extensions must list at most 32/,
    call: (c) => c.sendMessage(sendParams({ extensions: Array.from({ length: 33 }, (_, i) => `urn:x:${i}`) })),
  },
  {
    name: '101 reference task ids',
    field: /message\.referenceTaskIds must list at most 100/,
    call: (c) => c.sendMessage(sendParams({ referenceTaskIds: Array.from({ length: 101 }, () => randomUUID()) })),
  },
  {
    name: 'metadata of 10,001 values',
    field: /holds more than 10000 JSON values/,
    call: (c) =>
      c.sendMessage(
        sendParams({ metadata: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, i])) }),
      ),
  },
  {
    name: 'message metadata holding a string of 3,000,000 characters (issue 22, item 6)',
    field: /^message\.metadata takes the request's metadata past 100000 characters/,
    call: (c) => c.sendMessage(sendParams({ metadata: { note: long(3_000_000) } })),
  },
  {
    name: 'part metadata taking the request past 100,000 characters of metadata',
    field: /^message\.parts\[1\]\.metadata takes the request's metadata past 100000 characters/,
    call: (c) =>
      c.sendMessage(
        sendParams({
          parts: [
            { ...textPart('a'), metadata: { note: long(60_000) } },
            { ...textPart('b'), metadata: { note: long(60_000) } },
          ],
        }),
      ),
  },
  {
    name: 'CancelTask metadata of 100,001 characters',
    field: /^metadata takes the request's metadata past 100000 characters/,
    call: (c) => c.cancelTask({ tenant: '', id: randomUUID(), metadata: { note: long(100_000) } }),
    notOn: 'HTTP+JSON', // the SDK's REST client sends no body with a cancel
  },
  {
    name: 'metadata nested 150 levels deep',
    field: /more than 100 levels deep/,
    call: (c) => c.sendMessage(sendParams({ metadata: deepObject(150) })),
  },
  {
    name: 'historyLength -1 on SendMessage',
    field: /configuration\.historyLength must be a whole number/,
    call: (c) =>
      c.sendMessage(
        sendParams(
          {},
          {
            configuration: {
              acceptedOutputModes: [],
              historyLength: -1,
              returnImmediately: false,
              taskPushNotificationConfig: undefined,
            },
          },
        ),
      ),
  },
  {
    name: 'historyLength -1 on GetTask',
    field: /historyLength must be a whole number/,
    call: (c) => c.getTask({ tenant: '', id: randomUUID(), historyLength: -1 }),
  },
  {
    name: 'GetTask of an id of 129 characters',
    field: /id .*must be at most 128/,
    call: (c) => c.getTask({ tenant: '', id: long(129) }),
  },
  {
    name: 'CancelTask of an id of 129 characters',
    field: /id .*must be at most 128/,
    call: (c) => c.cancelTask({ tenant: '', id: long(129), metadata: {} }),
  },
  {
    name: 'SubscribeToTask of an id of 129 characters',
    field: /id .*must be at most 128/,
    call: (c) => collect(c.resubscribeTask({ tenant: '', id: long(129) })),
  },
  {
    name: 'a push token holding a NUL, which PostgreSQL cannot store (issue 33)',
    field: /^token must hold no control characters \(NUL included\)/,
    call: (c) => c.createTaskPushNotificationConfig(pushConfig({ taskId: randomUUID(), token: 'a\u0000b' })),
  },
  {
    name: "SendMessage's push config with a NUL in its URL (issue 33)",
    field: /^configuration\.taskPushNotificationConfig\.url must hold no control characters/,
    call: (c) =>
      c.sendMessage(
        sendParams(
          {},
          {
            configuration: {
              acceptedOutputModes: [],
              historyLength: undefined,
              returnImmediately: false,
              taskPushNotificationConfig: pushConfig({ url: 'https://example.com/a\u0000' }),
            },
          },
        ),
      ),
  },
  {
    name: 'a push config id holding a NUL, looked up (issue 33)',
    field: /^(id|The config id in the path) must hold no control characters/,
    call: (c) => c.getTaskPushNotificationConfig({ tenant: '', taskId: randomUUID(), id: 'a\u0000b' }),
  },
  {
    name: 'ListTasks of 101 a page',
    field: /pageSize must be a whole number from 1 to 100/,
    call: (c) =>
      c.listTasks({
        tenant: '',
        contextId: '',
        status: 0,
        pageSize: 101,
        pageToken: '',
        historyLength: undefined,
        statusTimestampAfter: undefined,
        includeArtifacts: undefined,
      }),
  },
];

for (const transport of TRANSPORTS) {
  describe(`invalid params over ${transport} are RequestMalformedError, the field named, and the server goes on`, () => {
    for (const bad of INVALID.filter((b) => b.notOn !== transport)) {
      it(bad.name, async () => {
        const client = await h.client(transport);
        await assert.rejects(bad.call(client), (error: unknown) => {
          assert.ok(
            error instanceof RequestMalformedError,
            `not a RequestMalformedError: ${String(error).slice(0, 300)}`,
          );
          assert.match(error.message, bad.field);
          assert.ok(error.message.length < 500, `a long message: ${error.message.slice(0, 100)}…`);
          return true;
        });
        await assertAliveOn(client);
      });
    }

    it('a message at the bounds is accepted: 100 parts, metadata 99 levels deep and of 100,000 characters', async () => {
      const client = await h.client(transport);
      // message.metadata is at level 2, so 97 objects below it reach level 99, the deepest allowed.
      // Its keys and strings: "deep" and 97 "a" (101 characters), "note" and the string (99,899).
      const metadata = { deep: deepObject(97), note: long(99_895) };
      const task = await client.sendMessage(sendParams({ parts: parts(100), metadata }));
      assert.ok('id' in task && task.id, 'a task');
    });
  });
}
