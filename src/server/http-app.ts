import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { describeError, type Logger } from '../log.js';
import type { TokenAuthenticator } from './auth.js';
import { JSONRPC_PATH, REST_PATH } from '../wire.js';
import { cardJson } from './card.js';
import { INTERNAL_ERROR_MESSAGE } from './a2a-errors.js';
import { answerBodyRefusal, jsonRpcEdge, restEdge, verifyBodyText } from './edge-http.js';
import { TransportCardCache } from './transport-card.js';
import { clientGoneContextBuilder, httpGoneSignal, withClientGone } from './client-gone.js';
import { requireBearer, userBuilderFor } from './http-auth.js';
import { requestLog } from './request-log.js';
import { isBuilt, webPage } from './web-page.js';
import { UnavailableForm, unavailableAnswers } from './unavailable.js';

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
 * (which then leaves them alone), then checked against the edge schema (`edge-http.ts`)
 * before the SDK's decoders coerce them, and every error that escapes the SDK's handlers is answered
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
  app.use(
    `/${AGENT_CARD_PATH}`,
    agentCardHandler({
      agentCardProvider: async () => cardJson(await options.handler.getAgentCard()),
      cache: { maxAge: 0 },
    }),
  );
  const body = express.json({
    limit: options.bodyLimit,
    type: ['application/json', 'application/a2a+json', 'application/*+json'],
    verify: verifyBodyText,
  });
  const userBuilder = withClientGone(userBuilderFor(options.authenticator), httpGoneSignal);
  const contextBuilder = clientGoneContextBuilder;
  const auth = (binding: 'jsonrpc' | 'rest'): RequestHandler[] =>
    options.authenticator ? [requireBearer(options.authenticator, binding)] : [];
  const requestHandler = new TransportCardCache(options.handler);
  app.use(
    JSONRPC_PATH,
    ...auth('jsonrpc'),
    body,
    jsonRpcEdge(),
    jsonRpcHandler({ requestHandler, userBuilder, contextBuilder }),
  );
  app.use(
    REST_PATH,
    ...auth('rest'),
    unavailableAnswers(),
    body,
    restEdge(),
    restHandler({ requestHandler: new UnavailableForm(requestHandler, 'rest'), userBuilder, contextBuilder }),
  );
  if (options.webDir) {
    if (!isBuilt(options.webDir))
      options.log.warn('the web page is not built (run npm run build); / explains that instead', {
        dir: options.webDir,
      });
    app.use(webPage(options.webDir));
  }
  app.use((_req, res) => {
    res.status(404).json({
      error: {
        code: 404,
        status: 'NOT_FOUND',
        message: 'Not found. The agent card is at /.well-known/agent-card.json.',
      },
    });
  });
  app.use(errorResponder(options.log));
  return app;
}

/** What to answer for an error that escaped the SDK's handlers: HTTP status, words, JSON-RPC code. */
function classify(error: { status?: unknown; type?: unknown } | null | undefined): {
  status: number;
  message: string;
  rpcCode: number;
} {
  const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 600 ? error.status : 500;
  if (status === 413)
    return {
      status,
      message: 'The request body is larger than this server accepts.',
      rpcCode: A2A_ERROR_CODE.INVALID_REQUEST,
    };
  // express reports a path segment that does not decode (`/tasks/%ff`) as a 400 URIError.
  if (status === 400 && error instanceof URIError) {
    return {
      status,
      message:
        'The request path is not valid percent-encoding: encode each path segment as UTF-8 (e.g. with encodeURIComponent).',
      rpcCode: A2A_ERROR_CODE.INVALID_REQUEST,
    };
  }
  if (status === 400 && error?.type === 'entity.parse.failed')
    return { status, message: 'The request body is not valid JSON.', rpcCode: A2A_ERROR_CODE.PARSE_ERROR };
  if (status < 500)
    return { status, message: 'The request could not be processed.', rpcCode: A2A_ERROR_CODE.INVALID_REQUEST };
  return { status, message: INTERNAL_ERROR_MESSAGE, rpcCode: A2A_ERROR_CODE.INTERNAL_ERROR };
}

function statusName(status: number): string {
  if (status >= 500) return 'INTERNAL';
  return status === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT';
}

function errorResponder(log: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const { status, message, rpcCode } = classify(error);
    if (status >= 500) log.error('request failed', { path: req.path, error: describeError(error) });
    if (res.headersSent) return res.end();
    // Not req.baseUrl: express resets it on leaving the mounted router, so here it is always ''.
    const jsonRpc = req.path === JSONRPC_PATH || req.path.startsWith(`${JSONRPC_PATH}/`);
    if (answerBodyRefusal(error, jsonRpc ? 'jsonrpc' : 'rest', res)) return;
    if (jsonRpc) {
      return res
        .status(status === 413 ? 413 : 200)
        .json({ jsonrpc: '2.0', id: null, error: { code: rpcCode, message } });
    }
    // The HTTP+JSON error body of A2A 1.0 (AIP-193): the code, its status name and the message.
    return res.status(status).json({ error: { code: status, status: statusName(status), message } });
  };
}
