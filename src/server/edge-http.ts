import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { A2A_CONTENT_TYPE } from '@a2a-js/sdk';
import { HarnessError } from '../errors.js';
import { transportForms, type TransportForms } from './a2a-errors.js';
import {
  bodyTextRefusal,
  EDGE_LIMITS,
  isEdgeMethod,
  jsonRefusal,
  pathIdRefusal,
  refusal,
  type EdgeMethod,
} from './edge-schema.js';

/**
 * The edge schema (`edge-schema.ts`) on the JSON-RPC route, after the body is parsed and before
 * the SDK's handler: first the JSON-RPC envelope, refused as an invalid request (-32600, a batch
 * included: the SDK would answer -32602), then the params of the methods the schema knows,
 * refused as invalid params (-32602, the SDK's `RequestMalformedError`). Other methods go on to
 * the SDK with only their nesting checked; so does a body that was not parsed as JSON, for the
 * SDK to name the content type it wants.
 */
export function jsonRpcEdge(): RequestHandler {
  return (req, res, next) => {
    const body: unknown = req.body;
    if (body === undefined) return next();
    const invalid = envelopeRefusal(body);
    if (invalid) return answerJsonRpcError(res, null, new HarnessError('request_invalid', invalid));
    const { id = null, method, params } = body as { id?: JsonRpcId; method: string; params?: unknown };
    const reason = isEdgeMethod(method) ? refusal(method, params, 'params') : jsonRefusal(params, 'params');
    if (reason) return answerJsonRpcError(res, id, new HarnessError('params_invalid', reason));
    next();
  };
}

/**
 * For `express.json`'s `verify` option: refuses a body whose structure alone is far too big
 * (`bodyTextRefusal`) before it is parsed, as an invalid request, which the app's error
 * handler answers.
 */
export function verifyBodyText(_req: IncomingMessage, _res: ServerResponse, bytes: Buffer): void {
  const reason = bodyTextRefusal(bytes);
  if (reason) throw new HarnessError('request_invalid', reason);
}

type JsonRpcId = string | number | null;

/** Answers `error` as a JSON-RPC error response, in its {@link transportForms} form. */
export function answerJsonRpcError(res: Response, id: JsonRpcId, error: unknown): TransportForms {
  const forms = transportForms(error);
  res.status(forms.jsonRpc.httpStatus).json({ jsonrpc: '2.0', id, error: forms.jsonRpc.error });
  return forms;
}

/** Answers `error` as an HTTP+JSON error response, in its {@link transportForms} form. */
export function answerRestError(res: Response, error: unknown): TransportForms {
  const forms = transportForms(error);
  res.setHeader('Content-Type', A2A_CONTENT_TYPE);
  res.status(forms.http.status).json(forms.http.body);
  return forms;
}

function envelopeRefusal(body: unknown): string | undefined {
  if (Array.isArray(body)) return 'Batch requests are not supported: send one JSON-RPC request per HTTP request.';
  if (typeof body !== 'object' || body === null)
    return 'The body must be a JSON-RPC 2.0 request object, e.g. {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "..."}}.';
  const { jsonrpc, id, method } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0') return 'jsonrpc must be "2.0".';
  const idOk =
    id === undefined ||
    id === null ||
    Number.isInteger(id) ||
    (typeof id === 'string' && id.length <= EDGE_LIMITS.idChars);
  if (!idOk) return `id must be an integer, null or a string of at most ${EDGE_LIMITS.idChars} characters.`;
  if (typeof method !== 'string' || method === '') return 'method must name an A2A method, e.g. "SendMessage".';
  return undefined;
}

interface RestRoute {
  verb: 'get' | 'post' | 'delete';
  /** As the SDK's REST router writes it (path-to-regexp), without the optional tenant segment. */
  path: string;
  method: EdgeMethod;
  /** The params of `method` that this request amounts to, in their JSON form. */
  params(req: Request): unknown;
  /** What the params are called in a message. */
  root: string;
}

const BODY = 'the request body';
const QUERY = 'the request';

/**
 * The routes of the SDK's HTTP+JSON router that carry params the schema knows, in the SDK's
 * order (a subscribe path also matches `/tasks/:taskId`, so it comes first).
 */
const ROUTES: RestRoute[] = [
  { verb: 'post', path: '/message\\:send', method: 'SendMessage', params: (req) => req.body ?? {}, root: BODY },
  {
    verb: 'post',
    path: '/message\\:stream',
    method: 'SendStreamingMessage',
    params: (req) => req.body ?? {},
    root: BODY,
  },
  {
    verb: 'get',
    path: '/tasks/:taskId\\:subscribe',
    method: 'SubscribeToTask',
    params: (req) => ({ id: req.params.taskId }),
    root: QUERY,
  },
  {
    verb: 'post',
    path: '/tasks/:taskId\\:subscribe',
    method: 'SubscribeToTask',
    params: (req) => ({ id: req.params.taskId }),
    root: QUERY,
  },
  {
    verb: 'post',
    path: '/tasks/:taskId\\:cancel',
    method: 'CancelTask',
    params: (req) => ({ id: req.params.taskId, metadata: req.body?.metadata }),
    root: BODY,
  },
  {
    verb: 'get',
    path: '/tasks/:taskId',
    method: 'GetTask',
    params: (req) => ({ id: req.params.taskId, historyLength: query(req, 'historyLength') }),
    root: QUERY,
  },
  {
    verb: 'get',
    path: '/tasks',
    method: 'ListTasks',
    params: (req) => ({
      contextId: query(req, 'contextId'),
      status: digitsAsNumber(query(req, 'status')),
      pageSize: query(req, 'pageSize'),
      pageToken: query(req, 'pageToken'),
      historyLength: query(req, 'historyLength'),
      statusTimestampAfter: query(req, 'statusTimestampAfter'),
      includeArtifacts: booleanWord(query(req, 'includeArtifacts')),
    }),
    root: QUERY,
  },
  {
    verb: 'post',
    path: '/tasks/:taskId/pushNotificationConfigs',
    method: 'CreateTaskPushNotificationConfig',
    params: (req) => ({ ...(isPlainObject(req.body) ? req.body : {}), taskId: req.params.taskId }),
    root: BODY,
  },
  {
    verb: 'get',
    path: '/tasks/:taskId/pushNotificationConfigs',
    method: 'ListTaskPushNotificationConfigs',
    params: (req) => ({
      taskId: req.params.taskId,
      tenant: query(req, 'tenant'),
      pageSize: query(req, 'pageSize'),
      pageToken: query(req, 'pageToken'),
    }),
    root: QUERY,
  },
  ...(['get', 'delete'] as const).map((verb): RestRoute => ({
    verb,
    path: '/tasks/:taskId/pushNotificationConfigs/:configId',
    method: verb === 'get' ? 'GetTaskPushNotificationConfig' : 'DeleteTaskPushNotificationConfig',
    params: (req) => ({ taskId: req.params.taskId, id: req.params.configId, tenant: query(req, 'tenant') }),
    root: QUERY,
  })),
];

/**
 * The edge schema on the HTTP+JSON routes, before the SDK's router: each route the SDK serves
 * with params the schema knows is mirrored here, its params built from the path, the query and
 * the body as the SDK builds them, and refused as invalid params (HTTP 400, the SDK's error body
 * for a `RequestMalformedError`). An accepted request leaves this router for the SDK's.
 */
export function restEdge(): Router {
  const router = express.Router();
  for (const route of ROUTES) {
    const check: RequestHandler = (req, res, next) => {
      // A body the JSON parser skipped has another content type: the SDK's guard names the right one.
      if (route.verb === 'post' && req.body === undefined && req.headers['content-type'] !== undefined)
        return next('router');
      const reason =
        pathIdRefusal('tenant', req.params.tenant) ??
        pathIdRefusal('task id', req.params.taskId) ??
        pathIdRefusal('config id', req.params.configId) ??
        (route.method === 'CancelTask' && req.body !== undefined && !isPlainObject(req.body)
          ? `${BODY} must be a JSON object.`
          : undefined) ??
        refusal(route.method, route.params(req), route.root);
      if (reason) answerRestError(res, new HarnessError('params_invalid', reason));
      else next('router');
    };
    router[route.verb](route.path, check);
    router[route.verb](`/:tenant${route.path}`, check);
  }
  return router;
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A query parameter; an empty one counts as absent, as the SDK counts it. A repeated one stays a list, which the schema refuses. */
function query(req: Request, name: string): unknown {
  const value = req.query[name];
  return value === '' ? undefined : value;
}

/** `?status=2` as the SDK reads it: a number when it is digits. */
function digitsAsNumber(value: unknown): unknown {
  return typeof value === 'string' && /^\d{1,3}$/.test(value) ? Number(value) : value;
}

/** `?includeArtifacts=true` as a boolean; anything but `true` or `false` is left for the schema to refuse. */
function booleanWord(value: unknown): unknown {
  return value === 'true' ? true : value === 'false' ? false : value;
}
