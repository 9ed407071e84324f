/** The endpoints of bench/http-servers.ts on `node:http` alone. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as work from './work.js';
import type { Running } from './variant.js';

// #region a2a
const BODY_LIMIT = 4 * 2 ** 20;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new Error('too large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

async function answer(res: ServerResponse, result: work.Answer): Promise<void> {
  if ('json' in result) return sendJson(res, 200, result.json);
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  for await (const event of result.events) res.write(work.sseFrame(event));
  res.end();
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!;
  if (req.method === 'POST' && path === work.JSONRPC_PATH) return answer(res, work.answerJsonRpc(await readJson(req)));
  if (req.method === 'POST' && path === `${work.REST_PATH}/message:stream`) {
    const result = work.restStream(await readJson(req));
    return result ? answer(res, result) : sendJson(res, 400, { error: { code: 400, message: 'no message' } });
  }
  if (req.method === 'GET' && path.startsWith(`${work.REST_PATH}/tasks/`))
    return sendJson(res, 200, { ...work.TASK, id: decodeURIComponent(path.slice(`${work.REST_PATH}/tasks/`.length)) });
  if (!getRoute(req, res, path)) sendJson(res, 404, { error: { code: 404, message: 'Not found' } });
}
// #endregion

// #region get-routes
function getRoute(req: IncomingMessage, res: ServerResponse, path: string): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (path === '/.well-known/agent-card.json') sendJson(res, 200, work.CARD);
  else if (path === '/healthz' || path === '/readyz') sendJson(res, 200, { status: 'ok' });
  else if (path === '/metrics') {
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
    res.end(work.METRICS);
  } else if (path === '/' || path === '/index.html') {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ...work.PAGE_HEADERS });
    res.end(work.PAGE);
  } else return false;
  return true;
}
// #endregion

export async function start(): Promise<Running> {
  const server = createServer((req, res) => {
    route(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: { code: 500, message: 'Internal error' } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
