/**
 * The log is JSON lines: a request line for every HTTP request and gRPC call, with a request
 * id, and never a token, an Authorization header or the text of a message.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, describeError } from '../../src/log.js';
import { createClient, send, startTestHarness, type TestHarness } from '../e2e/support.js';

const TOKEN = 'log-test-token-9f8e7d6c5b4a';
const SECRET_TEXT = 'the-launch-code-is-swordfish';

describe('createLogger', () => {
  it('writes one JSON object per line: time, level, msg and the fields', () => {
    const lines: string[] = [];
    const log = createLogger((line) => lines.push(line));
    log.warn('model turn failed', { task: 't-1', error: describeError(new Error('boom')), skipped: undefined });
    log.info('plain');
    assert.equal(lines.length, 2);
    const first = JSON.parse(lines[0]!);
    assert.match(first.time, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(
      { ...first, time: undefined },
      { time: undefined, level: 'warn', msg: 'model turn failed', task: 't-1', error: 'Error: boom' },
    );
    assert.ok(!lines[0]!.includes('\n'));
    assert.equal(JSON.parse(lines[1]!).msg, 'plain');
  });

  it('a field cannot replace time, level or msg; an error value is described', () => {
    const lines: string[] = [];
    createLogger((line) => lines.push(line)).error('x', {
      level: 'fake',
      msg: 'fake',
      error: new Error('bad\n at /home/me/secret/file.js'),
    });
    const entry = JSON.parse(lines[0]!);
    assert.equal(entry.level, 'error');
    assert.equal(entry.msg, 'x');
    assert.equal(entry.error, 'Error: bad');
  });
});

describe('createLogger for a terminal', () => {
  it('writes short human lines: the time, the level, the message, the fields on the same line', () => {
    const lines: string[] = [];
    const log = createLogger({ write: (line) => lines.push(line), pretty: true, colors: false });
    log.warn('model turn failed', { task: 't-1', error: new Error('boom\n at /home/me/secret.js') });
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^\[\d\d:\d\d:\d\d\] WARN: model turn failed \{"task":"t-1","error":"Error: boom"\}$/);
  });

  it('colors the level unless told not to', () => {
    const lines: string[] = [];
    createLogger({ write: (line) => lines.push(line), pretty: true, colors: true }).error('x');
    assert.ok(lines[0]!.includes('\x1b['), 'an escape sequence');
  });
});

describe('request logs of an authenticated harness', () => {
  const lines: string[] = [];
  let h: TestHarness;

  before(async () => {
    h = await startTestHarness({
      harness: { auth: { tokens: new Map([[TOKEN, 'alice']]) }, log: createLogger((line) => lines.push(line)) },
    });
    for (const transport of ['JSONRPC', 'HTTP+JSON', 'GRPC'] as const) {
      const client = await createClient(h.harness.url, transport, {
        authorization: `Bearer ${TOKEN}`,
        'x-request-id': `req-${transport.replace('+', '')}`,
      });
      const task = await send(client, SECRET_TEXT);
      await send(client, `/model ${SECRET_TEXT}`, { taskId: task.id }).catch(() => undefined);
    }
    await fetch(`${h.harness.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}x`, 'x-request-id': 'bad id with spaces' },
      body: '{}',
    });
    const wrong = await createClient(h.harness.url, 'GRPC', { authorization: `Bearer ${TOKEN}x` });
    await send(wrong, SECRET_TEXT).catch(() => undefined);
    await h.close();
  });

  after(async () => {
    await h?.close();
  });

  it('every line is a JSON object with time, level and msg', () => {
    assert.ok(lines.length > 5);
    for (const line of lines) {
      const entry = JSON.parse(line);
      assert.equal(typeof entry.time, 'string');
      assert.match(entry.level, /^(info|warn|error)$/);
      assert.equal(typeof entry.msg, 'string');
    }
  });

  it('no line carries the token, the Authorization header or the message text', () => {
    for (const line of lines) {
      assert.ok(!line.includes(TOKEN), line);
      assert.ok(!/authorization|bearer /i.test(line), line);
      assert.ok(!line.includes(SECRET_TEXT), line);
    }
  });

  it('each HTTP request has one line with its request id, status, time and user', () => {
    const requests = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request');
    assert.ok(requests.length > 0);
    for (const entry of requests) {
      assert.match(entry.requestId, /^[A-Za-z0-9._:-]+$/);
      assert.equal(typeof entry.status, 'number');
      assert.equal(typeof entry.ms, 'number');
      assert.match(entry.method, /^(GET|POST)$/);
    }
    const sent = requests.filter((entry) => entry.requestId === 'req-JSONRPC' && entry.rpc === 'SendMessage');
    assert.equal(sent.length, 2);
    assert.ok(sent.every((entry) => entry.user === 'alice' && entry.status === 200 && entry.path === '/a2a/jsonrpc'));
    assert.ok(
      requests.some(
        (entry) =>
          entry.requestId === 'req-HTTPJSON' && entry.user === 'alice' && entry.path === '/a2a/rest/message:send',
      ),
    );
    const refused = requests.find((entry) => entry.status === 401);
    assert.ok(refused, 'the refused request is logged');
    assert.equal(refused.user, undefined);
    assert.match(refused.requestId, /^[0-9a-f-]{36}$/, 'an unusable x-request-id is replaced by a UUID');
  });

  it('gRPC calls are logged the same way', () => {
    const calls = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'grpc call');
    assert.ok(
      calls.some(
        (entry) =>
          entry.requestId === 'req-GRPC' &&
          entry.method === 'sendMessage' &&
          entry.code === 'OK' &&
          entry.user === 'alice',
      ),
    );
    assert.ok(calls.some((entry) => entry.code === 'UNAUTHENTICATED' && entry.user === undefined));
  });

  it('the HTTP response echoes the request id', async () => {
    const h2 = await startTestHarness();
    try {
      const response = await fetch(`${h2.harness.url}/.well-known/agent-card.json`, {
        headers: { 'x-request-id': 'abc-123' },
      });
      assert.equal(response.headers.get('x-request-id'), 'abc-123');
      const fresh = await fetch(`${h2.harness.url}/.well-known/agent-card.json`);
      assert.match(fresh.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    } finally {
      await h2.close();
    }
  });

  it('--log-content adds the text of the message sent, and only that', async () => {
    const captured: string[] = [];
    const h3 = await startTestHarness({
      harness: { logContent: true, log: createLogger((line) => captured.push(line)) },
    });
    try {
      await send(await h3.client('JSONRPC'), SECRET_TEXT);
    } finally {
      await h3.close();
    }
    const sent = captured.map((line) => JSON.parse(line)).find((entry) => entry.rpc === 'SendMessage');
    assert.equal(sent?.text, SECRET_TEXT);
    assert.equal(captured.filter((line) => line.includes(SECRET_TEXT)).length, 1, 'the reply is not logged');
  });
});
