/**
 * Bad input at the HTTP edge: malformed or hostile requests over raw `fetch`, on JSON-RPC and
 * HTTP+JSON. Each must get a clear protocol error (JSON, the right code, no stack trace, no
 * file path, no raw runtime error), never a hang, and the server must answer a `/help`
 * command afterwards. Every fetch is bounded so that a hang fails instead of stalling the run.
 *
 * HTTP+JSON paths: in @a2a-js/sdk 1.3.0 the 1.0 routes are `/message:send`, `/tasks/:id`, …
 * under the REST base, with an optional tenant segment in front (`/v1/message:send` is
 * read as tenant "v1"); the SDK's own 1.0 client calls them without a prefix, and so do we.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestHarness, type TestHarness } from './support.js';

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

async function request(path: string, init: { method?: string; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<Reply> {
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
const rpc = (method: string, params: unknown, headers?: Record<string, string>) => jsonRpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), headers);
const rest = (path: string, init: { method?: string; body?: BodyInit; headers?: Record<string, string> } = {}) => request(`/a2a/rest${path}`, init);

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
  assert.match(reply.contentType, /json/, `not JSON (${reply.status} ${reply.contentType}): ${reply.text.slice(0, 300)}`);
  assert.notEqual(reply.json, undefined, `the body does not parse as JSON: ${reply.text.slice(0, 300)}`);
  for (const leak of [/\n\s*at\s/, /\bat .+:\d+:\d+/, /\/work\//, /node_modules/, /file:\/\//, /\.[cm]?[jt]s:\d+/]) {
    assert.doesNotMatch(reply.text, leak, `the body leaks internals: ${reply.text.slice(0, 500)}`);
  }
  assert.ok(!reply.text.includes(process.cwd()), 'the body names the working directory');
  assert.doesNotMatch(reply.text, /\b(RangeError|TypeError|ReferenceError|SyntaxError)\b|Maximum call stack/, `a raw runtime error: ${reply.text.slice(0, 300)}`);
}

/** A JSON-RPC error response whose code is one of `codes`; returns the error. */
function assertRpcError(reply: Reply, codes: number | number[], options: { status?: number; id?: unknown } = {}): { code: number; message: string } {
  assertClean(reply);
  const wanted = Array.isArray(codes) ? codes : [codes];
  assert.equal(reply.status, options.status ?? 200, `HTTP status: ${reply.text.slice(0, 300)}`);
  assert.equal(reply.json?.jsonrpc, '2.0', `not a JSON-RPC response: ${reply.text.slice(0, 300)}`);
  assert.ok(!('result' in reply.json), `expected an error, got a result: ${reply.text.slice(0, 300)}`);
  const error = reply.json.error;
  assert.equal(typeof error?.code, 'number', `no error code: ${reply.text.slice(0, 300)}`);
  assert.equal(typeof error.message, 'string');
  assert.ok(wanted.includes(error.code), `error code ${error.code}, expected ${wanted.join(' or ')}: ${reply.text.slice(0, 300)}`);
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
    // JSON-RPC 2.0 says -32600; SDK 1.3.0 answers -32602 for an array (its RequestMalformedError),
    // and the body parser in front (strict) reads a bare scalar as a parse failure (-32700).
    assertRpcError(await jsonRpc('[]'), [INVALID_REQUEST, INVALID_PARAMS], { id: null });
    for (const body of ['42', 'null', 'true', '"SendMessage"']) {
      assertRpcError(await jsonRpc(body), [PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS], { id: null });
    }
    await assertAlive();
  });

  it('a body over the limit is answered 413 with a JSON-RPC error', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: message('x'.repeat(5 * 1024 * 1024)) } });
    assertRpcError(await jsonRpc(body), INVALID_REQUEST, { status: 413, id: null });
    await assertAlive();
  });

  it('an unknown method is -32601', async () => {
    assertRpcError(await rpc('NoSuchMethod', {}), METHOD_NOT_FOUND, { id: 1 });
    assertRpcError(await rpc('message/send', { message: message('/help') }), METHOD_NOT_FOUND, { id: 1 });
    await assertAlive();
  });

  it('a request without the A2A-Version header is a JSON-RPC error, not a crash', async () => {
    const error = assertRpcError(await rpc('SendMessage', { message: message('/help') }, { 'content-type': 'application/json' }), [VERSION_NOT_SUPPORTED, INVALID_REQUEST]);
    assert.notEqual(error.code, INTERNAL_ERROR);
    await assertAlive();
  });

  describe('params of the wrong type are invalid params (-32602)', () => {
    it('message.parts a string', async () => {
      assertRpcError(await rpc('SendMessage', { message: message('hello', { parts: 'hello' }) }), INVALID_PARAMS, { id: 1 });
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
      assertRpcError(await rpc('SendMessage', { message: message(text, { taskId: randomUUID() }) }), TASK_NOT_FOUND, { id: 1 });
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
    const sent = h.chatRequests().slice(calls).map((body) => JSON.stringify(body.messages.at(-1)));
    assert.equal(sent.length, 1, `the model was called for a request that was refused (${reply.text.slice(0, 200)})`);
    assert.match(sent[0]!, /after the refusal/);
    const error = assertRpcError(reply, [PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS]);
    assert.notEqual(error.code, INTERNAL_ERROR);
    await assertAlive();
  });

  it('invalid UTF-8 bytes are no crash: inside a string they are replaced, between tokens they are a parse error', async () => {
    const bytes = (before: string, after: string) => withInvalidUtf8(before, [0xff, 0xfe, 0xc3, 0x28], after);
    const inString = await jsonRpc(bytes(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":"/help `, '"}]}}}'));
    assertClean(inString);
    assert.equal(inString.status, 200, inString.text.slice(0, 300));
    assert.equal(inString.json.jsonrpc, '2.0');
    if (inString.json.error) assert.notEqual(inString.json.error.code, INTERNAL_ERROR, inString.text.slice(0, 300));
    else assert.deepEqual(inString.json.result?.task?.status?.message?.metadata, { command: 'help' }, 'a reply to /help with a garbled argument');
    assertRpcError(await jsonRpc(bytes('{"jsonrpc":"2.0","id":1,', '"method":"SendMessage"}')), PARSE_ERROR, { id: null });
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
    assertRestError(await rest('/message:send', { body: JSON.stringify({ message: message('x'.repeat(5 * 1024 * 1024)) }) }), 413);
    await assertAlive();
  });

  it('a request without the A2A-Version header is a 4xx JSON error', async () => {
    assertRestError(await rest('/message:send', { body: JSON.stringify({ message: message('/help') }), headers: { 'content-type': 'application/json' } }), 400);
    await assertAlive();
  });

  describe('params of the wrong type are 400', () => {
    it('message.parts a string', async () => {
      assertRestError(await rest('/message:send', { body: JSON.stringify({ message: message('hello', { parts: 'hello' }) }) }), 400);
      await assertAlive();
    });

    it('message.role a number out of range', async () => {
      assertRestError(await rest('/message:send', { body: JSON.stringify({ message: message('hello', { role: 99 }) }) }), 400);
      await assertAlive();
    });

    it('message.messageId missing', async () => {
      const { messageId: _, ...noId } = message('/help');
      assertRestError(await rest('/message:send', { body: JSON.stringify({ message: noId }) }), 400);
      await assertAlive();
    });
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
      assertRestError(await rest('/message:send', { body: JSON.stringify({ message: message(text, { taskId: randomUUID() }) }) }), 404);
    }
    await assertAlive();
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
