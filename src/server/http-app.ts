import type { IncomingMessage, ServerResponse } from 'node:http';
import { AGENT_CARD_PATH, type AgentCard } from '@a2a-js/sdk';
import { HarnessError, isHarnessError } from '../errors.js';
import { describeError, type Logger } from '../log.js';
import type { ComposedSteps } from '../a2a/index.js';
import type { Authenticator } from './authentication.js';
import { JSONRPC_PATH, METRICS_PATH, REST_PATH } from '../wire.js';
import { cardJson } from './card.js';
import { agentCardRoute, sendJwks } from './card-route.js';
import { JWKS_PATH, type CardSigner } from './card-signing.js';
import { transportForms } from './a2a-errors.js';
import { answerJsonRpcError, answerRestError, JSON_CONTENT_TYPE, jsonRpcEdgeRefused, sendJson } from './edge-http.js';
import { parseByteLimit, readJsonBody, type ReadRequest } from './http-body.js';
import { authenticateRequest, scopeCheck } from './http-auth.js';
import type { ProbeHandler } from './health.js';
import { admitRequests, type Admission } from './admission.js';
import { requestLog } from './request-log.js';
import { jsonRpcBinding } from './jsonrpc-binding.js';
import { percentEncodingRefusal, restBinding } from './rest-binding.js';
import { isBuilt, webPage } from './web-page.js';
import { hookRoute, isHookPath, redactHookPath, type HookRouteOptions } from './hook-route.js';

export interface HttpAppOptions {
  /** The request path every A2A call runs through (`request-path.ts`). */
  path: Pick<ComposedSteps, 'run'>;
  /** The card its route serves, built on every request (CMD-16). */
  card: () => Promise<AgentCard>;
  /** The largest request body accepted, e.g. "1mb"; larger ones are answered 413. */
  bodyLimit: string;
  log: Logger;
  /** The built chat page (`dist/web`), served at `/`; no page when absent. */
  webDir?: string;
  /** When set, the A2A routes need a bearer token it accepts (and its scopes); the card and the page stay public. */
  authenticator?: Authenticator;
  /** Log the text of each message sent (debugging only). */
  logContent?: boolean;
  /** Answers `/healthz` and `/readyz` (`health.ts`), first of all. */
  probes?: ProbeHandler;
  /** Answers `GET /metrics`, before the request log (scrapes are not logged) and off the A2A auth. */
  metrics?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Admits or refuses every A2A call (the JSON-RPC and HTTP+JSON routes) before anything else reads it (`admission.ts`). */
  admission?: Admission;
  /** Signs the card served, and serves its public keys at `JWKS_PATH` (issue 38). */
  signer?: CardSigner;
  /** Hooks' trigger URLs, `POST /hooks/<id>/<secret>` (issue 39), admitted as the A2A routes are; none when schedules are off. */
  hooks?: HookRouteOptions;
}

/** What `node:http`'s server calls for each request. */
export type HttpListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * JSON-RPC and HTTP+JSON on one `node:http` listener, with the agent card, in this order: the
 * probes, `/metrics`, admission of the A2A routes (`admission.ts`: a request past the bounds
 * is refused before it is logged, authenticated or read), the request log (`request-log.ts`:
 * every request once, with a request id), the card (rebuilt on every request and served with
 * `no-cache`, CMD-16), then on the A2A routes the bearer check before the body is read
 * (`http-auth.ts`), the body read with its limit (`http-body.ts`), the edge schema on JSON-RPC
 * (`edge-http.ts`; HTTP+JSON checks it per route) and the binding (`jsonrpc-binding.ts`,
 * `rest-binding.ts`), which runs the call through the request path; hooks' trigger URLs
 * (`hook-route.ts`, admitted too, their secret kept out of the log); then the chat page, which
 * can shadow none of them, and a JSON 404 for any other path. Every error that escapes is
 * answered as JSON without a stack trace, in the route's binding's shape.
 */
export function createHttpApp(options: HttpAppOptions): HttpListener {
  const { log } = options;
  const limit = parseByteLimit(options.bodyLimit);
  const admit = options.admission && admitRequests(options.admission);
  const logRequest = requestLog({ log, logContent: options.logContent });
  const { signer } = options;
  const card = agentCardRoute(async () => {
    const json = cardJson(await options.card());
    return signer ? signer.signJson(json) : json;
  });
  const onInternal = (error: unknown) => log.error('request failed', { error: describeError(error) });
  const checkScopes = options.authenticator && scopeCheck(options.authenticator);
  const jsonRpc = jsonRpcBinding({ path: options.path, onInternal, checkScopes });
  const rest = restBinding({ path: options.path, card: options.card, onInternal, checkScopes });
  if (options.webDir && !isBuilt(options.webDir))
    log.warn('the web page is not built (run npm run build); / explains that instead', { dir: options.webDir });
  const page = options.webDir ? webPage(options.webDir) : undefined;
  const hooks = options.hooks && hookRoute(options.hooks);

  const notFound = (res: ServerResponse, binding: 'jsonrpc' | 'rest' | undefined) => {
    const { http } = transportForms(
      new HarnessError('route_unknown', 'Not found. The agent card is at /.well-known/agent-card.json.'),
    );
    // Under the HTTP+JSON path, its content type, as every answer there has.
    sendJson(res, http.status, http.body, binding === 'rest' ? JSON_CONTENT_TYPE : JSON_CONTENT_TYPE);
  };

  const serve = async (req: ReadRequest, res: ServerResponse, path: string, search: string): Promise<void> => {
    const binding = bindingOf(path);
    const hook = hooks && isHookPath(path) ? hooks : undefined;
    if ((binding || hook) && admit && !admit(req, res, binding ?? 'rest')) return;
    logRequest(req, res);
    if (hook) return hook(req, res, path);
    if ((req.method === 'GET' || req.method === 'HEAD') && path === `/${AGENT_CARD_PATH}`) return card(req, res);
    if (signer && (req.method === 'GET' || req.method === 'HEAD') && path === JWKS_PATH)
      return sendJwks(res, await signer.jwks());
    if (binding) {
      const user = await authenticateRequest(options.authenticator, req, res, binding);
      if (!user) return;
      await readJsonBody(req, limit);
      const within = path.slice(binding === 'jsonrpc' ? JSONRPC_PATH.length : REST_PATH.length);
      if (binding === 'jsonrpc' && jsonRpcEdgeRefused(res, req.body)) return;
      if (binding === 'jsonrpc' && req.method === 'POST' && (within === '' || within === '/'))
        return jsonRpc(req, res, user);
      if (binding === 'rest' && (await rest(req, res, user, within || '/', search))) return;
    }
    if (page) page(req, res, () => notFound(res, binding));
    else notFound(res, binding);
  };

  return (req, res) => {
    const [path = '/', search = ''] = (req.url ?? '/').split(/\?(.*)/s, 2);
    if (options.probes) return options.probes(req, res, () => next());
    next();
    function next() {
      if (options.metrics && path === METRICS_PATH) return options.metrics(req, res);
      serve(req, res, path, search).catch((error: unknown) => answerEscaped(req, res, path, error, log));
    }
  };
}

/** The binding whose path `path` is under, if any (a path segment boundary; any case, as express matched). */
function bindingOf(path: string): 'jsonrpc' | 'rest' | undefined {
  const lower = path.toLowerCase();
  const under = (prefix: string) => lower === prefix || lower.startsWith(`${prefix}/`);
  return under(JSONRPC_PATH) ? 'jsonrpc' : under(REST_PATH) ? 'rest' : undefined;
}

/** Answers an error that escaped the routes, in the shape of the route's binding; one that is the server's own is logged. */
function answerEscaped(req: IncomingMessage, res: ServerResponse, path: string, error: unknown, log: Logger): void {
  const refusal = isHarnessError(error) ? error : error instanceof URIError ? percentEncodingRefusal() : error;
  let internal: unknown;
  if (res.headersSent) {
    internal = transportForms(refusal).internal;
    res.end();
  } else {
    ({ internal } =
      bindingOf(path) === 'jsonrpc' ? answerJsonRpcError(res, null, refusal) : answerRestError(res, refusal));
  }
  if (internal !== undefined)
    log.error('request failed', { path: redactHookPath(path), method: req.method, error: describeError(internal) });
}
