/** The endpoints of bench/http-servers.ts on Hono, served by `@hono/node-server`. */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import * as work from './work.js';
import type { Running } from './variant.js';

// #region a2a
const BODY_LIMIT = 4 * 2 ** 20;

async function readJson(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    return undefined;
  }
}

function answer(c: Context, result: work.Answer): Response {
  if ('json' in result) return c.json(result.json);
  return streamSSE(c, async (stream) => {
    for await (const event of result.events) await stream.writeSSE(event);
  });
}

function a2aRoutes(app: Hono): void {
  app.use(`${work.JSONRPC_PATH}`, bodyLimit({ maxSize: BODY_LIMIT }));
  app.use(`${work.REST_PATH}/*`, bodyLimit({ maxSize: BODY_LIMIT }));
  app.post(work.JSONRPC_PATH, async (c) => answer(c, work.answerJsonRpc(await readJson(c))));
  app.post(`${work.REST_PATH}/message:stream`, async (c) => {
    const result = work.restStream(await readJson(c));
    return result ? answer(c, result) : c.json({ error: { code: 400, message: 'no message' } }, 400);
  });
  app.get(`${work.REST_PATH}/tasks/:id`, (c) => c.json({ ...work.TASK, id: c.req.param('id') }));
  app.notFound((c) => c.json({ error: { code: 404, message: 'Not found' } }, 404));
  app.onError((_error, c) => c.json({ error: { code: 500, message: 'Internal error' } }, 500));
}
// #endregion

// #region get-routes
function getRoutes(app: Hono): void {
  app.get('/.well-known/agent-card.json', (c) => c.json(work.CARD));
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', (c) => c.json({ status: 'ok' }));
  app.get('/metrics', (c) => c.text(work.METRICS, 200, { 'Content-Type': 'text/plain; version=0.0.4' }));
  app.on('GET', ['/', '/index.html'], (c) => c.html(work.PAGE, 200, work.PAGE_HEADERS));
}
// #endregion

export async function start(): Promise<Running> {
  const app = new Hono();
  a2aRoutes(app);
  getRoutes(app);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
