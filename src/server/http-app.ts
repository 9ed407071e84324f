import express, { type ErrorRequestHandler } from 'express';
import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { describeError, type Logger } from '../log.js';
import { JSONRPC_PATH, REST_PATH } from './card.js';

export interface HttpAppOptions {
  handler: A2ARequestHandler;
  /** The largest request body accepted, e.g. "1mb"; larger ones are answered 413. */
  bodyLimit: string;
  log: Logger;
}

/**
 * JSON-RPC and HTTP+JSON on one express app, with the agent card. The card is rebuilt on every
 * request and served with `no-cache` (CMD-16): the SDK's default of an hour would hide a
 * changed command list. Bodies are parsed here, with a limit, before the SDK's own parser
 * (which then leaves them alone), and every error that escapes the SDK's handlers is answered
 * as JSON without a stack trace.
 */
export function createHttpApp(options: HttpAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Hashing every JSON-RPC answer for an ETag costs time on large tasks and serves no cache.
  app.set('etag', false);
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: options.handler, cache: { maxAge: 0 } }));
  const body = express.json({ limit: options.bodyLimit, type: ['application/json', 'application/a2a+json', 'application/*+json'] });
  app.use(JSONRPC_PATH, body, jsonRpcHandler({ requestHandler: options.handler, userBuilder: UserBuilder.noAuthentication }));
  app.use(REST_PATH, body, restHandler({ requestHandler: options.handler, userBuilder: UserBuilder.noAuthentication }));
  app.use((_req, res) => {
    res.status(404).json({ error: { code: 404, status: 'NOT_FOUND', message: 'Not found. The agent card is at /.well-known/agent-card.json.' } });
  });
  app.use(errorResponder(options.log));
  return app;
}

function errorResponder(log: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 600 ? error.status : 500;
    const message =
      status === 413
        ? 'The request body is larger than this server accepts.'
        : status === 400
          ? 'The request body is not valid JSON.'
          : status < 500
            ? 'The request could not be processed.'
            : 'Internal error; the server logged it.';
    if (status >= 500) log.error('request failed', { path: req.path, error: describeError(error) });
    if (res.headersSent) return res.end();
    // Not req.baseUrl: express resets it on leaving the mounted router, so here it is always ''.
    if (req.path === JSONRPC_PATH || req.path.startsWith(`${JSONRPC_PATH}/`)) {
      const code = status === 400 ? -32700 : status === 413 ? -32600 : -32603;
      return res.status(status === 413 ? 413 : 200).json({ jsonrpc: '2.0', id: null, error: { code, message } });
    }
    return res.status(status).json({ error: { code: status, message } });
  };
}
