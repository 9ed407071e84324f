import type { ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import { HarnessError } from '../errors.js';
import { transportForms, type TransportForms } from './a2a-errors.js';
import { EDGE_LIMITS, isEdgeMethod, jsonRefusal, pathIdRefusal, refusal, type EdgeMethod } from './edge-schema.js';
import { RETRY_AFTER_SECONDS } from './unavailable.js';

/**
 * The edge schema (`edge-schema.ts`) on the JSON-RPC route, after the body is read and before
 * it is decoded: first the JSON-RPC envelope, refused as an invalid request (-32600, a batch
 * included), then the params of the methods the schema knows, refused as invalid params
 * (-32602, the SDK's `RequestMalformedError`). Other methods go on with only their nesting
 * checked; so does a body that was not read as JSON, for the binding to name the content type
 * it wants. Answers the refusal and says so, or says nothing.
 */
export function jsonRpcEdgeRefused(res: ServerResponse, body: unknown): boolean {
  if (body === undefined) return false;
  const invalid = envelopeRefusal(body);
  if (invalid) return (answerJsonRpcError(res, null, new HarnessError('request_invalid', invalid)), true);
  const { id = null, method, params } = body as { id?: JsonRpcId; method: string; params?: unknown };
  const reason = isEdgeMethod(method) ? refusal(method, params, 'params') : jsonRefusal(params, 'params');
  if (reason) return (answerJsonRpcError(res, id, new HarnessError('params_invalid', reason)), true);
  return false;
}

export type JsonRpcId = string | number | null;

/**
 * The content type of every JSON answer, JSON-RPC's and HTTP+JSON's alike: A2A 1.0 §11.1 names
 * `application/json` for the HTTP+JSON binding's responses, errors included (§11.6), although
 * its media type `application/a2a+json` is registered for it (§14.1.1) and accepted on requests.
 */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Answers `body` as JSON with `status`; a 503 (a refusal to retry) tells when to try again. */
export function sendJson(res: ServerResponse, status: number, body: unknown, contentType: string): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  if (status === SERVICE_UNAVAILABLE) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

const SERVICE_UNAVAILABLE = 503;

/** Answers `error` as a JSON-RPC error response, in its {@link transportForms} form. */
export function answerJsonRpcError(res: ServerResponse, id: JsonRpcId, error: unknown): TransportForms {
  const forms = transportForms(error);
  sendJson(res, forms.jsonRpc.httpStatus, { jsonrpc: '2.0', id, error: forms.jsonRpc.error }, JSON_CONTENT_TYPE);
  return forms;
}

/** Answers `error` as an HTTP+JSON error response, in its {@link transportForms} form. */
export function answerRestError(res: ServerResponse, error: unknown): TransportForms {
  const forms = transportForms(error);
  sendJson(res, forms.http.status, forms.http.body, JSON_CONTENT_TYPE);
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

/** The HTTP+JSON routes whose params the edge schema knows (`rest-binding.ts` serves them all). */
export type RestEdgeRoute =
  | 'send'
  | 'stream'
  | 'subscribe'
  | 'cancel'
  | 'getTask'
  | 'listTasks'
  | 'createPushConfig'
  | 'listPushConfigs'
  | 'getPushConfig'
  | 'deletePushConfig';

/** What an HTTP+JSON request carries: its path's params, its query, its body. */
export interface RestRequestParts {
  path: Record<string, string | undefined>;
  query: ParsedUrlQuery;
  body: unknown;
}

interface RestEdge {
  method: EdgeMethod;
  /** The params of `method` that this request amounts to, in their JSON form. */
  params(req: RestRequestParts): unknown;
  /** What the params are called in a message. */
  root: string;
}

const BODY = 'the request body';
const QUERY = 'the request';

const REST_EDGES: Record<RestEdgeRoute, RestEdge> = {
  send: { method: 'SendMessage', params: (req) => req.body ?? {}, root: BODY },
  stream: { method: 'SendStreamingMessage', params: (req) => req.body ?? {}, root: BODY },
  subscribe: { method: 'SubscribeToTask', params: (req) => ({ id: req.path.taskId }), root: QUERY },
  cancel: {
    method: 'CancelTask',
    params: (req) => ({ id: req.path.taskId, metadata: (req.body as { metadata?: unknown } | undefined)?.metadata }),
    root: BODY,
  },
  getTask: {
    method: 'GetTask',
    params: (req) => ({ id: req.path.taskId, historyLength: query(req, 'historyLength') }),
    root: QUERY,
  },
  listTasks: {
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
  createPushConfig: {
    method: 'CreateTaskPushNotificationConfig',
    params: (req) => ({ ...(isPlainObject(req.body) ? (req.body as object) : {}), taskId: req.path.taskId }),
    root: BODY,
  },
  listPushConfigs: {
    method: 'ListTaskPushNotificationConfigs',
    params: (req) => ({
      taskId: req.path.taskId,
      tenant: query(req, 'tenant'),
      pageSize: query(req, 'pageSize'),
      pageToken: query(req, 'pageToken'),
    }),
    root: QUERY,
  },
  getPushConfig: {
    method: 'GetTaskPushNotificationConfig',
    params: (req) => ({ taskId: req.path.taskId, id: req.path.configId, tenant: query(req, 'tenant') }),
    root: QUERY,
  },
  deletePushConfig: {
    method: 'DeleteTaskPushNotificationConfig',
    params: (req) => ({ taskId: req.path.taskId, id: req.path.configId, tenant: query(req, 'tenant') }),
    root: QUERY,
  },
};

/**
 * The edge schema on an HTTP+JSON route: its params built from the path, the query and the
 * body as the binding builds them, and refused as invalid params (HTTP 400, the error body of a
 * `RequestMalformedError`). The reason, or undefined for a request the schema accepts.
 */
export function restEdgeRefusal(route: RestEdgeRoute, req: RestRequestParts): string | undefined {
  const edge = REST_EDGES[route];
  return (
    pathIdRefusal('tenant', req.path.tenant) ??
    pathIdRefusal('task id', req.path.taskId) ??
    pathIdRefusal('config id', req.path.configId) ??
    (edge.method === 'CancelTask' && req.body !== undefined && !isPlainObject(req.body)
      ? `${BODY} must be a JSON object.`
      : undefined) ??
    refusal(edge.method, edge.params(req), edge.root)
  );
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A query parameter; an empty one counts as absent, as the SDK counts it. A repeated one stays a list, which the schema refuses. */
function query(req: RestRequestParts, name: string): unknown {
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
