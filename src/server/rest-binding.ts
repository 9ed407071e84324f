import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import {
  A2A_CONTENT_TYPE,
  AgentCard,
  HTTP_EXTENSION_HEADER,
  ListTaskPushNotificationConfigsResponse,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
  taskStateFromJSON,
  type AgentCard as Card,
  type Message,
} from '@a2a-js/sdk';
import {
  A2AError,
  ContentTypeNotSupportedError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext, User } from '@a2a-js/sdk/server';
import { type Call, type CallMethod, type CallOf, type ComposedSteps, type Stream } from '../a2a/index.js';
import { requestFieldsOf, responseJsonFor } from '../a2a/version-fields.js';
import { HarnessError } from '../errors.js';
import { transportForms } from './a2a-errors.js';
import { httpCallContext } from './call-context.js';
import type { ScopeCheck } from './http-auth.js';
import {
  JSON_CONTENT_TYPE,
  restEdgeRefusal,
  sendJson,
  type RestEdgeRoute,
  type RestRequestParts,
} from './edge-http.js';
import { mediaTypeOf } from './http-body.js';
import { answerSse } from './sse.js';
import { serializeTaskList } from './task-list-json.js';

type RouteName = RestEdgeRoute | 'extendedAgentCard';

interface Route {
  verbs: readonly string[];
  name: RouteName;
  pattern: RegExp;
}

/**
 * The HTTP+JSON routes (A2A 1.0 section 11), each also under a tenant's segment, in the order
 * they are tried: a subscribe path also matches `/tasks/{id}`, so it comes first.
 */
const ROUTES: Route[] = [
  route(['GET'], 'extendedAgentCard', '/extendedAgentCard'),
  route(['POST'], 'send', '/message:send'),
  route(['POST'], 'stream', '/message:stream'),
  route(['GET', 'POST'], 'subscribe', '/tasks/{taskId}:subscribe'),
  route(['POST'], 'cancel', '/tasks/{taskId}:cancel'),
  route(['GET'], 'getTask', '/tasks/{taskId}'),
  route(['GET'], 'listTasks', '/tasks'),
  route(['POST'], 'createPushConfig', '/tasks/{taskId}/pushNotificationConfigs'),
  route(['GET'], 'listPushConfigs', '/tasks/{taskId}/pushNotificationConfigs'),
  route(['GET'], 'getPushConfig', '/tasks/{taskId}/pushNotificationConfigs/{configId}'),
  route(['DELETE'], 'deletePushConfig', '/tasks/{taskId}/pushNotificationConfigs/{configId}'),
];

/** `/tasks/{taskId}:cancel` as a pattern: one segment per param, an optional tenant before, a trailing slash allowed. */
function route(verbs: string[], name: RouteName, template: string): Route {
  const body = template
    .split(/(\{[a-zA-Z]+\})/)
    .map((piece) =>
      piece.startsWith('{') ? `(?<${piece.slice(1, -1)}>[^/]+?)` : piece.replace(/[.*+?^$()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return { verbs, name, pattern: new RegExp(`^(?:/(?<tenant>[^/]+?))?${body}/?$`, 'i') };
}

/** A route of the binding, with its path's params decoded; undefined when none matches. */
export function matchRestRoute(
  method: string,
  path: string,
): { name: RouteName; params: Record<string, string | undefined> } | undefined {
  const verb = method === 'HEAD' ? 'GET' : method;
  for (const { verbs, name, pattern } of ROUTES) {
    if (!verbs.includes(verb)) continue;
    const match = pattern.exec(path);
    if (!match) continue;
    const params: Record<string, string | undefined> = {};
    for (const [key, value] of Object.entries(match.groups ?? {}))
      params[key] = value === undefined ? undefined : decodeSegment(value);
    return { name, params };
  }
  return undefined;
}

/** A path segment decoded; one that is not valid percent-encoding is refused. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw percentEncodingRefusal();
  }
}

export function percentEncodingRefusal(): HarnessError {
  return new HarnessError(
    'request_invalid',
    'The request path is not valid percent-encoding: encode each path segment as UTF-8 (e.g. with encodeURIComponent).',
  );
}

export interface RestBindingOptions {
  path: Pick<ComposedSteps, 'run'>;
  /** The card, for whether push notifications are on. */
  card(): Promise<Card>;
  /** Told of a failure that is the server's own (the client is told only that it happened). */
  onInternal(error: unknown): void;
  /** Refuses a call whose token lacks a scope its method needs (`http-auth.ts`). */
  checkScopes?: ScopeCheck;
}

/** What one request is, as a route handler reads it. */
interface Exchange {
  parts: RestRequestParts;
  tenant: string;
  context: ServerCallContext;
  res: ServerResponse;
}

/**
 * The HTTP+JSON binding (A2A 1.0 section 11): a request to one of its routes (under the REST
 * path, its body read by `http-app.ts`) is checked against the edge schema, becomes one call of
 * the request path with the call's context built here (`call-context.ts`), and is answered with
 * the JSON of its result (the SDK's generated converters), or Server-Sent Events (`sse.ts`).
 * Errors are `google.rpc.Status` bodies (`transportForms`); a refusal to retry is a 503 with
 * Retry-After and the status name UNAVAILABLE. Answers false for a path it has no route for.
 */
export function restBinding(options: RestBindingOptions) {
  const fail = (res: ServerResponse, error: unknown): void => {
    if (res.headersSent) return void (res.writableEnded || res.end());
    const forms = transportForms(error);
    if (forms.internal !== undefined) options.onInternal(forms.internal);
    sendJson(res, forms.http.status, forms.http.body, JSON_CONTENT_TYPE);
  };
  const run = <M extends CallMethod>(
    x: Exchange,
    method: M,
    params: CallOf<M>['params'],
  ): ReturnType<A2ARequestHandler[M]> => {
    // The params as the request wrote them: its JSON body, or a GET's query (its values strings).
    const written = isObject(x.parts.body) ? (x.parts.body as Record<string, unknown>) : { ...x.parts.query };
    Object.assign(params as object, requestFieldsOf(x.context.requestedVersion, method, written));
    const streaming = method === 'sendMessageStream' || method === 'resubscribe';
    options.checkScopes?.(x.context.user!, method, x.res);
    return options.path.run({ method, params, context: x.context, streaming } as Call) as ReturnType<
      A2ARequestHandler[M]
    >;
  };
  const answer = (x: Exchange, status: number, json?: unknown) => {
    setExtensions(x);
    if (json === undefined) {
      // No body, but the content type every answer of the binding has.
      x.res.setHeader('Content-Type', JSON_CONTENT_TYPE);
      x.res.statusCode = status;
      return void x.res.end();
    }
    sendJson(x.res, status, json, JSON_CONTENT_TYPE);
  };
  const stream = (x: Exchange, events: Stream) =>
    answerSse(x.res, events, {
      eventJson: (item) => responseJsonFor(x.context.requestedVersion, StreamResponse.toJSON(item), item),
      failedFirst: (error) => fail(x.res, error),
      errorJson: (error) => {
        const forms = transportForms(error);
        if (forms.internal !== undefined) options.onInternal(forms.internal);
        return forms.http.body;
      },
      headers: () => setExtensions(x),
    });
  const taskJson = (x: Exchange, task: Task) => responseJsonFor(x.context.requestedVersion, Task.toJSON(task), task);

  const handlers: Record<RouteName, (x: Exchange) => Promise<void>> = {
    extendedAgentCard: async (x) => {
      const card = await run(x, 'getAuthenticatedExtendedAgentCard', { tenant: x.tenant });
      answer(x, 200, AgentCard.toJSON(card));
    },
    send: async (x) => {
      const result = await run(x, 'sendMessage', sendParams(x));
      const payload =
        'messageId' in result
          ? { $case: 'message' as const, value: result as Message }
          : 'artifacts' in result
            ? { $case: 'task' as const, value: result as Task }
            : undefined;
      if (!payload) throw new A2AError('Invalid SendMessageResult type');
      const json = SendMessageResponse.toJSON({ payload }) as { task?: unknown };
      if (payload.$case === 'task') json.task = taskJson(x, payload.value);
      answer(x, 200, json);
    },
    stream: (x) => stream(x, run(x, 'sendMessageStream', sendParams(x))),
    subscribe: (x) => stream(x, run(x, 'resubscribe', { id: x.parts.path.taskId!, tenant: x.tenant })),
    cancel: async (x) => {
      const params = { id: x.parts.path.taskId!, tenant: x.tenant, metadata: {} };
      answer(x, 200, taskJson(x, await run(x, 'cancelTask', params)));
    },
    getTask: async (x) => {
      const params: { id: string; tenant: string; historyLength?: number } = {
        id: x.parts.path.taskId!,
        tenant: x.tenant,
      };
      const historyLength = first(x.parts.query.historyLength);
      if (historyLength !== undefined) params.historyLength = parseHistoryLength(historyLength);
      answer(x, 200, taskJson(x, await run(x, 'getTask', params)));
    },
    listTasks: async (x) => {
      const q = (name: string) => first(x.parts.query[name]);
      const status = q('status');
      const pageSize = q('pageSize');
      const historyLength = q('historyLength');
      const includeArtifacts = q('includeArtifacts') === 'true';
      const params = {
        tenant: x.tenant,
        contextId: q('contextId') || '',
        status: status ? taskStateFromJSON(isNaN(Number(status)) ? status : Number(status)) : 0,
        pageSize: pageSize !== undefined && pageSize !== '' ? parsePageSize(pageSize) : undefined,
        pageToken: q('pageToken') || '',
        historyLength:
          historyLength !== undefined && historyLength !== '' ? parseHistoryLength(historyLength) : undefined,
        statusTimestampAfter: q('statusTimestampAfter') || undefined,
        includeArtifacts,
      };
      const list = await run(x, 'listTasks', params);
      answer(x, 200, serializeTaskList(list, includeArtifacts, x.context.requestedVersion));
    },
    createPushConfig: async (x) => {
      if (!(await options.card()).capabilities?.pushNotifications) throw new PushNotificationNotSupportedError();
      const body = (x.parts.body ?? {}) as object;
      const params = TaskPushNotificationConfig.fromJSON({ ...body, taskId: x.parts.path.taskId });
      const config = await run(x, 'createTaskPushNotificationConfig', params);
      answer(x, 201, TaskPushNotificationConfig.toJSON(config));
    },
    listPushConfigs: async (x) => {
      const params = { taskId: x.parts.path.taskId!, ...pageOf(x.parts.query), tenant: x.tenant };
      const list = await run(x, 'listTaskPushNotificationConfigs', params);
      answer(x, 200, ListTaskPushNotificationConfigsResponse.toJSON(list));
    },
    getPushConfig: async (x) => {
      const params = { taskId: x.parts.path.taskId!, id: x.parts.path.configId!, tenant: x.tenant };
      answer(x, 200, TaskPushNotificationConfig.toJSON(await run(x, 'getTaskPushNotificationConfig', params)));
    },
    deletePushConfig: async (x) => {
      const params = { taskId: x.parts.path.taskId!, id: x.parts.path.configId!, tenant: x.tenant };
      await run(x, 'deleteTaskPushNotificationConfig', params);
      answer(x, 204);
    },
  };

  return async (
    req: IncomingMessage & { body?: unknown },
    res: ServerResponse,
    user: User,
    path: string,
    search: string,
  ): Promise<boolean> => {
    const type = mediaTypeOf(req);
    const unsupported = type !== undefined && type !== 'application/json' && type !== A2A_CONTENT_TYPE;
    const matched = matchRestRoute(req.method ?? 'GET', path);
    if (!matched) {
      if (!unsupported) return false;
      fail(res, contentTypeRefusal(req));
      return true;
    }
    const query = parseQuery(search);
    const { tenant: pathTenant } = matched.params;
    const parts: RestRequestParts = { path: matched.params, query, body: req.body };
    // A body skipped as another content type is refused for it below, not by the schema.
    const skipped = req.method === 'POST' && req.body === undefined && type !== undefined;
    if (matched.name !== 'extendedAgentCard' && !skipped) {
      const reason = restEdgeRefusal(matched.name, parts);
      if (reason) return (fail(res, new HarnessError('params_invalid', reason)), true);
    }
    if (unsupported) return (fail(res, contentTypeRefusal(req)), true);
    if (pathTenant) {
      // The path's tenant is the call's, whatever the body or the query say.
      if (isObject(req.body)) (req.body as Record<string, unknown>).tenant = pathTenant;
      query.tenant = pathTenant;
    }
    try {
      const context = httpCallContext(req, res, user, pathTenant || undefined);
      const x: Exchange = { parts, tenant: first(query.tenant) || '', context, res };
      await handlers[matched.name](x);
    } catch (error) {
      fail(res, error);
    }
    return true;
  };
}

function setExtensions(x: Exchange): void {
  if (x.context.activatedExtensions) x.res.setHeader(HTTP_EXTENSION_HEADER, Array.from(x.context.activatedExtensions));
}

function sendParams(x: Exchange): SendMessageRequest {
  const params = SendMessageRequest.fromJSON(x.parts.body ?? {});
  if (!params.message) throw new RequestMalformedError('message is required');
  if (!params.message.messageId) throw new RequestMalformedError('message.messageId is required');
  return params;
}

function contentTypeRefusal(req: IncomingMessage): ContentTypeNotSupportedError {
  return new ContentTypeNotSupportedError(
    `Unsupported Content-Type "${req.headers['content-type']}"; expected application/json or application/a2a+json.`,
  );
}

/** A query parameter's value; of a repeated one, the first. */
function first(value: ParsedUrlQuery[string]): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseHistoryLength(value: string): number {
  const parsed = parseInt(value, 10);
  if (isNaN(parsed)) throw new RequestMalformedError('historyLength must be a valid integer');
  if (parsed < 0) throw new RequestMalformedError('historyLength must be non-negative');
  return parsed;
}

/** The page a push-config listing asks for in its query (the edge schema checked it); none is 0 and "". */
function pageOf(query: ParsedUrlQuery): { pageSize: number; pageToken: string } {
  const pageSize = first(query.pageSize);
  return {
    pageSize: pageSize && /^\d{1,10}$/.test(pageSize) ? Number(pageSize) : 0,
    pageToken: first(query.pageToken) ?? '',
  };
}

function parsePageSize(value: string): number {
  const parsed = parseInt(value, 10);
  if (isNaN(parsed) || String(parsed) !== value.trim())
    throw new RequestMalformedError('pageSize must be a valid integer');
  if (parsed < 1 || parsed > 100) throw new RequestMalformedError('pageSize must be between 1 and 100');
  return parsed;
}
