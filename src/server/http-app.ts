import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { describeError, type Logger } from '../log.js';
import type { TokenAuthenticator } from './auth.js';
import { cardJson, JSONRPC_PATH, REST_PATH } from './card.js';
import { clientGoneContextBuilder, httpGoneSignal, withClientGone } from './client-gone.js';
import { requireBearer, userBuilderFor } from './http-auth.js';
import { requestLog } from './request-log.js';
import { isBuilt, webPage } from './web-page.js';

export interface HttpAppOptions {
  handler: A2ARequestHandler;
  /** The largest request body accepted, e.g. "1mb"; larger ones are answered 413. */
  bodyLimit: string;
  log: Logger;
  /** The built chat page (`dist/web`), served at `/`; no page when absent. */
  webDir?: string;
  /** When set, the A2A routes need a bearer token it knows; the card and the page stay public. */
  authenticator?: TokenAuthenticator;
  /** Log the text of each message sent (debugging only). */
  logContent?: boolean;
}

/**
 * JSON-RPC and HTTP+JSON on one express app, with the agent card. The card is rebuilt on every
 * request and served with `no-cache` (CMD-16): the SDK's default of an hour would hide a
 * changed command list. Bodies are parsed here, with a limit, before the SDK's own parser
 * (which then leaves them alone), and every error that escapes the SDK's handlers is answered
 * as JSON without a stack trace. The chat page comes after the A2A routes, so it can shadow
 * none of them; any other path is a JSON 404. Every request is logged once, with a request id
 * (`request-log.ts`); with an authenticator, the A2A routes refuse a request without a valid
 * bearer token before reading its body (`http-auth.ts`). Each call's context carries a signal
 * that fires when its client goes away (`client-gone.ts`).
 */
export function createHttpApp(options: HttpAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Hashing every JSON-RPC answer for an ETag costs time on large tasks and serves no cache.
  app.set('etag', false);
  app.use(requestLog({ log: options.log, logContent: options.logContent }));
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: async () => cardJson(await options.handler.getAgentCard()), cache: { maxAge: 0 } }));
  const body = express.json({ limit: options.bodyLimit, type: ['application/json', 'application/a2a+json', 'application/*+json'] });
  const userBuilder = withClientGone(userBuilderFor(options.authenticator), httpGoneSignal);
  const contextBuilder = clientGoneContextBuilder;
  const auth = (binding: 'jsonrpc' | 'rest'): RequestHandler[] => (options.authenticator ? [requireBearer(options.authenticator, binding)] : []);
  app.use(JSONRPC_PATH, ...auth('jsonrpc'), body, depthGuard, jsonRpcHandler({ requestHandler: options.handler, userBuilder, contextBuilder }));
  app.use(REST_PATH, ...auth('rest'), body, depthGuard, restHandler({ requestHandler: options.handler, userBuilder, contextBuilder }));
  if (options.webDir) {
    if (!isBuilt(options.webDir)) options.log.warn('the web page is not built (run npm run build); / explains that instead', { dir: options.webDir });
    app.use(webPage(options.webDir));
  }
  app.use((_req, res) => {
    res.status(404).json({ error: { code: 404, status: 'NOT_FOUND', message: 'Not found. The agent card is at /.well-known/agent-card.json.' } });
  });
  app.use(errorResponder(options.log));
  return app;
}

/**
 * Deeper JSON than this is refused before the SDK sees it: its protobuf conversion and the
 * `structuredClone` of its result manager recurse, and overflow the stack on deep input.
 * (100 is protobuf's own JSON recursion limit.)
 */
export const MAX_JSON_DEPTH = 100;

function tooDeep(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

const depthGuard: RequestHandler = (req, _res, next) =>
  next(tooDeep(req.body, MAX_JSON_DEPTH) ? Object.assign(new Error('too deep'), { status: 400, type: 'entity.too.deep' }) : undefined);

/** What to answer for an error that escaped the SDK's handlers: HTTP status, words, JSON-RPC code. */
function classify(error: any): { status: number; message: string; rpcCode: number } {
  const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 600 ? error.status : 500;
  if (status === 413) return { status, message: 'The request body is larger than this server accepts.', rpcCode: -32600 };
  if (error?.type === 'entity.too.deep') return { status, message: `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`, rpcCode: -32600 };
  if (status === 400) return { status, message: 'The request body is not valid JSON.', rpcCode: -32700 };
  if (status < 500) return { status, message: 'The request could not be processed.', rpcCode: -32600 };
  return { status, message: 'Internal error; the server logged it.', rpcCode: -32603 };
}

function errorResponder(log: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const { status, message, rpcCode } = classify(error);
    if (status >= 500) log.error('request failed', { path: req.path, error: describeError(error) });
    if (res.headersSent) return res.end();
    // Not req.baseUrl: express resets it on leaving the mounted router, so here it is always ''.
    if (req.path === JSONRPC_PATH || req.path.startsWith(`${JSONRPC_PATH}/`)) {
      return res.status(status === 413 ? 413 : 200).json({ jsonrpc: '2.0', id: null, error: { code: rpcCode, message } });
    }
    return res.status(status).json({ error: { code: status, message } });
  };
}
