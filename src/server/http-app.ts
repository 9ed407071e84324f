import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { AGENT_CARD_PATH, type AgentCard } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { HarnessError, isHarnessError } from '../errors.js';
import { describeError, type Logger } from '../log.js';
import type { TokenAuthenticator } from './auth.js';
import { JSONRPC_PATH, METRICS_PATH, REST_PATH } from '../wire.js';
import { cardJson } from './card.js';
import { agentCardRoute } from './card-route.js';
import { transportForms } from './a2a-errors.js';
import { answerJsonRpcError, answerRestError, jsonRpcEdge, restEdge, verifyBodyText } from './edge-http.js';
import {
  clientGoneContextBuilder,
  httpGoneSignal,
  LAST_EVENT_ID_KEY,
  REST_PAGE_KEY,
  restPageOf,
  withClientGone,
} from '../a2a/index.js';
import { requireBearer, userBuilderFor } from './http-auth.js';
import { requireProtocolVersion } from './protocol-version.js';
import type { ProbeHandler } from './health.js';
import { admitRequests, type Admission } from './admission.js';
import { requestLog } from './request-log.js';
import { TRACE_CARRIER_KEY, traceCarrier } from '../telemetry/propagation.js';
import { SSE_IDS_KEY, sseEventIds, sseIdsOf } from './sse-event-ids.js';
import { isBuilt, webPage } from './web-page.js';
import { retryableRefusalAnswers, UnavailableForm, unavailableAnswers } from './unavailable.js';

export interface HttpAppOptions {
  handler: A2ARequestHandler;
  /** The card its route serves, built on every request (CMD-16); default: the handler's. */
  card?: () => Promise<AgentCard>;
  /** The largest request body accepted, e.g. "1mb"; larger ones are answered 413. */
  bodyLimit: string;
  log: Logger;
  /** The built chat page (`dist/web`), served at `/`; no page when absent. */
  webDir?: string;
  /** When set, the A2A routes need a bearer token it knows; the card and the page stay public. */
  authenticator?: TokenAuthenticator;
  /** Log the text of each message sent (debugging only). */
  logContent?: boolean;
  /** Answers `/healthz` and `/readyz` (`health.ts`), first of all. */
  probes?: ProbeHandler;
  /** Answers `GET /metrics`, before the request log (scrapes are not logged) and off the A2A auth. */
  metrics?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Admits or refuses every A2A call (the JSON-RPC and HTTP+JSON routes) before anything else reads it (`admission.ts`). */
  admission?: Admission;
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
 * that fires when its client goes away (`a2a/client-gone.ts`). The probes come first, then the
 * metrics, then admission (`admission.ts`): a request past the bounds is refused before it is
 * logged, authenticated or read.
 */
export function createHttpApp(options: HttpAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Hashing every JSON-RPC answer for an ETag costs time on large tasks and serves no cache.
  app.set('etag', false);
  if (options.probes) app.use(options.probes);
  if (options.metrics) app.all(METRICS_PATH, options.metrics);
  if (options.admission) app.use([JSONRPC_PATH, REST_PATH], admitRequests(options.admission));
  app.use(requestLog({ log: options.log, logContent: options.logContent }));
  app.get(
    `/${AGENT_CARD_PATH}`,
    agentCardRoute(async () => cardJson(await (options.card ? options.card() : options.handler.getAgentCard()))),
  );
  const body = express.json({
    limit: options.bodyLimit,
    type: ['application/json', 'application/a2a+json', 'application/*+json'],
    verify: verifyBodyText,
  });
  const userBuilder = withClientGone(userBuilderFor(options.authenticator), httpGoneSignal, (req) => [
    [LAST_EVENT_ID_KEY, req.get('last-event-id')],
    [SSE_IDS_KEY, req.res && sseIdsOf(req.res)],
    [TRACE_CARRIER_KEY, traceCarrier((name) => req.get(name))],
    [REST_PAGE_KEY, req.method === 'GET' ? restPageOf(req.query) : undefined],
  ]);
  const contextBuilder = requireProtocolVersion(clientGoneContextBuilder);
  const auth = (binding: 'jsonrpc' | 'rest'): RequestHandler[] =>
    options.authenticator ? [requireBearer(options.authenticator, binding)] : [];
  const requestHandler = options.handler;
  app.use(
    JSONRPC_PATH,
    ...auth('jsonrpc'),
    retryableRefusalAnswers(),
    body,
    jsonRpcEdge(),
    sseEventIds(),
    jsonRpcHandler({ requestHandler, userBuilder, contextBuilder }),
  );
  app.use(
    REST_PATH,
    ...auth('rest'),
    unavailableAnswers(),
    body,
    restEdge(),
    sseEventIds(),
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
    const { http } = transportForms(
      new HarnessError('route_unknown', 'Not found. The agent card is at /.well-known/agent-card.json.'),
    );
    res.status(http.status).json(http.body);
  });
  app.use(errorResponder(options.log));
  return app;
}

/** What an error that escaped the SDK's handlers is: express's own client errors become refusals. */
function asRefusal(error: { status?: unknown; type?: unknown } | null | undefined): unknown {
  if (isHarnessError(error)) return error; // the edge's own, e.g. from `verifyBodyText`
  const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 600 ? error.status : 500;
  if (status === 413)
    return new HarnessError('request_too_large', 'The request body is larger than this server accepts.');
  // express reports a path segment that does not decode (`/tasks/%ff`) as a 400 URIError.
  if (status === 400 && error instanceof URIError)
    return new HarnessError(
      'request_invalid',
      'The request path is not valid percent-encoding: encode each path segment as UTF-8 (e.g. with encodeURIComponent).',
    );
  if (status === 400 && error?.type === 'entity.parse.failed')
    return new HarnessError('request_unparsable', 'The request body is not valid JSON.');
  if (status < 500) return new HarnessError('request_invalid', 'The request could not be processed.');
  return error;
}

function errorResponder(log: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const refusal = asRefusal(error);
    // Not req.baseUrl: express resets it on leaving the mounted router, so here it is always ''.
    const jsonRpc = req.path === JSONRPC_PATH || req.path.startsWith(`${JSONRPC_PATH}/`);
    let internal: unknown;
    if (res.headersSent) {
      internal = transportForms(refusal).internal;
      res.end();
    } else {
      ({ internal } = jsonRpc ? answerJsonRpcError(res, null, refusal) : answerRestError(res, refusal));
    }
    if (internal !== undefined) log.error('request failed', { path: req.path, error: describeError(internal) });
  };
}
