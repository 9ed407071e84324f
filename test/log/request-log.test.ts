/**
 * The HTTP request log (pino-http under the harness's Logger): one `request` line per request,
 * with the id, method, path, status, time and user, and never a header, a query or a body.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import { createLogger, type Logger } from '../../src/log.js';
import { readJsonBody } from '../../src/server/http-body.js';
import { requestLog } from '../../src/server/request-log.js';
import { poll, waitFor, within } from '../support/wait.js';

interface Logged {
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

/** A logger of one's own, not made by `createLogger`, as a program embedding the harness may pass. */
function recordingLogger(): { log: Logger; lines: Logged[]; events: EventEmitter } {
  const lines: Logged[] = [];
  const events = new EventEmitter();
  const record = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push({ level, message, fields: fields ?? {} });
    events.emit('line');
  };
  return {
    log: { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') },
    lines,
    events,
  };
}

/** An app behind the request log: `/fail` answers 500, `/hang` never answers, the rest 200. */
async function startApp(
  log: Logger,
  logContent = false,
): Promise<{ url: string; server: Server; arrivals: EventEmitter }> {
  const arrivals = new EventEmitter();
  const logRequest = requestLog({ log, logContent });
  // As the HTTP app (src/server/http-app.ts) runs the log: first, then the body is read.
  const server = createServer((req, res) => {
    logRequest(req, res);
    const path = req.url!.split('?', 1)[0];
    void readJsonBody(req, 1 << 20).then(() => {
      if (path === '/a2a/hang') return void arrivals.emit('hang');
      res.statusCode = path === '/a2a/fail' ? 500 : 200;
      res.end(JSON.stringify({ ok: true }));
    });
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, server, arrivals };
}

const SECRET = 'query-token-5e4d3c2b1a';

describe('requestLog', () => {
  const recorded = recordingLogger();
  let app: Awaited<ReturnType<typeof startApp>>;
  const lineOf = (requestId: string) =>
    waitFor(`the line of ${requestId}`, recorded.events, 'line', () =>
      recorded.lines.find((l) => l.fields.requestId === requestId),
    );
  before(async () => {
    app = await startApp(recorded.log);
  });
  after(() => {
    app.server.closeAllConnections();
    app.server.close();
  });

  it('writes one info line per request through a logger of its own: id, method, path without the query, status, time', async () => {
    const response = await fetch(`${app.url}/a2a/jsonrpc?token=${SECRET}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}`, 'x-request-id': 'req-1' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { secret: SECRET } }),
    });
    assert.equal(response.headers.get('x-request-id'), 'req-1');
    const line = await lineOf('req-1');
    assert.equal(line.level, 'info');
    assert.equal(line.message, 'request');
    const { ms, ...rest } = line.fields;
    assert.equal(typeof ms, 'number');
    assert.deepEqual(rest, {
      requestId: 'req-1',
      method: 'POST',
      path: '/a2a/jsonrpc',
      status: 200,
      rpc: 'SendMessage',
    });
    assert.ok(!JSON.stringify(recorded.lines).includes(SECRET), 'no token, header, query or body');
  });

  it('logs a failed request (5xx) with the same line at the same level, and no error object', async () => {
    const response = await fetch(`${app.url}/a2a/fail`, { headers: { 'x-request-id': 'req-500' } });
    assert.equal(response.status, 500);
    const line = await lineOf('req-500');
    assert.equal(line.level, 'info');
    assert.equal(line.message, 'request');
    assert.equal(line.fields.status, 500);
    assert.deepEqual(Object.keys(line.fields).sort(), ['method', 'ms', 'path', 'requestId', 'status']);
  });

  it('logs a request whose client went away before the answer as aborted', async () => {
    const arrived = new Promise((resolve) => app.arrivals.once('hang', resolve));
    const sent = request(`${app.url}/a2a/hang`, { headers: { 'x-request-id': 'req-gone' } });
    sent.on('error', () => undefined); // the test ends the request itself
    sent.end();
    await within('the request at the server', arrived);
    sent.destroy();
    const line = await lineOf('req-gone');
    assert.equal(line.fields.aborted, true);
    assert.equal(line.fields.path, '/a2a/hang');
  });
});

describe('requestLog through createLogger', () => {
  it('writes the JSON line of the harness log, with the message text only under logContent', async () => {
    for (const logContent of [false, true]) {
      const lines: string[] = [];
      const app = await startApp(
        createLogger((line) => lines.push(line)),
        logContent,
      );
      try {
        await fetch(`${app.url}/a2a/jsonrpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': 'req-json' },
          body: JSON.stringify({ method: 'SendMessage', params: { message: { parts: [{ text: 'hello there' }] } } }),
        });
        const entry = await poll('the request line', () =>
          lines.map((line) => JSON.parse(line)).find((e) => e.requestId === 'req-json'),
        );
        assert.match(entry.time, /^\d{4}-\d\d-\d\dT/);
        assert.equal(entry.level, 'info');
        assert.equal(entry.msg, 'request');
        assert.equal(entry.path, '/a2a/jsonrpc');
        assert.equal(entry.text, logContent ? 'hello there' : undefined);
        assert.equal(lines.length, 1, 'one line, nothing of pino-http besides it');
      } finally {
        app.server.closeAllConnections();
        app.server.close();
      }
    }
  });
});
