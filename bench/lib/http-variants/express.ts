/** The endpoints of bench/http-servers.ts on express 5, set up as src/server/http-app.ts set it up before it moved to node:http (issue 36). */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Response } from 'express';
import * as work from './work.js';
import type { Running } from './variant.js';

// #region a2a
async function answer(res: Response, result: work.Answer): Promise<void> {
  if ('json' in result) return void res.json(result.json);
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  for await (const event of result.events) res.write(work.sseFrame(event));
  res.end();
}

function a2aRoutes(app: express.Express): void {
  app.disable('x-powered-by');
  app.set('etag', false);
  const body = express.json({ limit: '4mb', type: ['application/json', 'application/*+json'] });
  app.post(work.JSONRPC_PATH, body, (req, res) => answer(res, work.answerJsonRpc(req.body)));
  app.post(`${work.REST_PATH}/message\\:stream`, body, async (req, res) => {
    const result = work.restStream(req.body);
    if (result) await answer(res, result);
    else res.status(400).json({ error: { code: 400, message: 'no message' } });
  });
  app.get(`${work.REST_PATH}/tasks/:id`, (req, res) => void res.json({ ...work.TASK, id: req.params.id }));
}

function notFound(app: express.Express): void {
  app.use((_req, res) => void res.status(404).json({ error: { code: 404, message: 'Not found' } }));
  // A body that does not parse is JSON-RPC's parse error, as the SDK's handler answers it.
  const parseError: ErrorRequestHandler = (error: { type?: string }, _req, res, _next) => {
    if (error?.type === 'entity.parse.failed')
      res.json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    else res.status(500).json({ error: { code: 500, message: 'Internal error' } });
  };
  app.use(parseError);
}
// #endregion

// #region get-routes
function getRoutes(app: express.Express): void {
  app.get('/.well-known/agent-card.json', (_req, res) => void res.json(work.CARD));
  app.get(['/healthz', '/readyz'], (_req, res) => void res.json({ status: 'ok' }));
  app.get('/metrics', (_req, res) => void res.type('text/plain; version=0.0.4').send(work.METRICS));
  app.get(['/', '/index.html'], (_req, res) => void res.set(work.PAGE_HEADERS).type('html').send(work.PAGE));
}
// #endregion

export async function start(): Promise<Running> {
  const app = express();
  a2aRoutes(app);
  getRoutes(app);
  notFound(app);
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
