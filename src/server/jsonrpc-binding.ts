import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  HTTP_EXTENSION_HEADER,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  type ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { A2A_ERROR_CODE, ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import type { ServerCallContext, User } from '@a2a-js/sdk/server';
import type { CallMethod, ComposedSteps, Stream } from '../a2a/index.js';
import { requestFieldsOf, responseJsonFor } from '../a2a/version-fields.js';
import type { TransportForms } from './a2a-errors.js';
import { transportForms } from './a2a-errors.js';
import { httpCallContext } from './call-context.js';
import { JSON_CONTENT_TYPE, sendJson, type JsonRpcId } from './edge-http.js';
import type { ScopeCheck } from './http-auth.js';
import { serializeTaskList } from './task-list-json.js';
import { answerSse } from './sse.js';

/** A JSON-RPC method: the call it is, how its params decode, how its result encodes. */
interface JsonRpcMethod {
  call: CallMethod;
  decode(params: unknown): unknown;
  /** Its result as JSON (the call's version may add fields, `version-fields.ts`); none for a streaming method. */
  encode?(result: unknown, version: string, params: unknown): unknown;
}

const task = (result: unknown, version: string) =>
  responseJsonFor(version, Task.toJSON(result as Task), result as Task);

/** The A2A 1.0 methods, by their JSON-RPC names; the streaming ones are answered with SSE. */
const METHODS: Record<string, JsonRpcMethod> = {
  SendMessage: {
    call: 'sendMessage',
    decode: (params) => SendMessageRequest.fromJSON(params),
    encode: (result, version) =>
      'messageId' in (result as object)
        ? { message: Message.toJSON(result as Message) }
        : { task: task(result, version) },
  },
  SendStreamingMessage: { call: 'sendMessageStream', decode: (p) => SendMessageRequest.fromJSON(p) },
  SubscribeToTask: { call: 'resubscribe', decode: (p) => SubscribeToTaskRequest.fromJSON(p) },
  GetTask: { call: 'getTask', decode: (p) => GetTaskRequest.fromJSON(p), encode: task },
  ListTasks: {
    call: 'listTasks',
    decode: (p) => ListTasksRequest.fromJSON(p),
    encode: (result, version, params) =>
      serializeTaskList(result as ListTasksResponse, (params as ListTasksRequest).includeArtifacts === true, version),
  },
  CancelTask: { call: 'cancelTask', decode: (p) => CancelTaskRequest.fromJSON(p), encode: task },
  CreateTaskPushNotificationConfig: {
    call: 'createTaskPushNotificationConfig',
    decode: (p) => TaskPushNotificationConfig.fromJSON(p),
    encode: (result) => TaskPushNotificationConfig.toJSON(result as TaskPushNotificationConfig),
  },
  GetTaskPushNotificationConfig: {
    call: 'getTaskPushNotificationConfig',
    decode: (p) => GetTaskPushNotificationConfigRequest.fromJSON(p),
    encode: (result) => TaskPushNotificationConfig.toJSON(result as TaskPushNotificationConfig),
  },
  DeleteTaskPushNotificationConfig: {
    call: 'deleteTaskPushNotificationConfig',
    decode: (p) => DeleteTaskPushNotificationConfigRequest.fromJSON(p),
    encode: () => null,
  },
  ListTaskPushNotificationConfigs: {
    call: 'listTaskPushNotificationConfigs',
    decode: (p) => ListTaskPushNotificationConfigsRequest.fromJSON(p),
    encode: (result) =>
      ListTaskPushNotificationConfigsResponse.toJSON(result as ListTaskPushNotificationConfigsResponse),
  },
  GetExtendedAgentCard: {
    call: 'getAuthenticatedExtendedAgentCard',
    decode: (p) => GetExtendedAgentCardRequest.fromJSON(p ?? {}),
    encode: (result) => AgentCard.toJSON(result as AgentCard),
  },
};

export interface JsonRpcBindingOptions {
  path: Pick<ComposedSteps, 'run'>;
  /** Told of a failure that is the server's own (the client is told only that it happened). */
  onInternal(error: unknown): void;
  /** Refuses a call whose token lacks a scope its method needs (`http-auth.ts`). */
  checkScopes?: ScopeCheck;
}

/**
 * The JSON-RPC binding (A2A 1.0 section 9): a POSTed JSON-RPC request, its body read and checked
 * at the edge (`http-app.ts`), becomes one call of the request path, with the call's context
 * built here (`call-context.ts`); its result is the JSON-RPC response, or for a streaming method
 * Server-Sent Events of responses (`sse.ts`). Params are decoded and results encoded with the
 * SDK's generated converters. Every error is an error response, with HTTP 200 except a refusal
 * to retry (draining, at the bound), which is a 503 with Retry-After so a balancer retries it.
 */
export function jsonRpcBinding(options: JsonRpcBindingOptions) {
  const answerError = (res: ServerResponse, id: JsonRpcId, error: unknown): TransportForms => {
    const forms = transportForms(error);
    if (forms.internal !== undefined) options.onInternal(forms.internal);
    sendJson(res, forms.jsonRpc.httpStatus, { jsonrpc: '2.0', id, error: forms.jsonRpc.error }, JSON_CONTENT_TYPE);
    return forms;
  };
  return async (req: IncomingMessage & { body?: unknown }, res: ServerResponse, user: User): Promise<void> => {
    const type = req.headers['content-type'];
    if (type !== undefined && type.split(';', 1)[0]!.trim().toLowerCase() !== 'application/json') {
      const refusal = new ContentTypeNotSupportedError(
        `Unsupported Content-Type "${type}"; expected application/json.`,
      );
      return void answerError(res, null, refusal);
    }
    const body = req.body as { id?: JsonRpcId; method?: string; params?: Record<string, unknown> } | undefined;
    // Not `??`: a call that fails outside its method is answered with a falsy id as null, as the SDK did.
    const outerId = body?.id || null;
    let context: ServerCallContext;
    try {
      context = httpCallContext(req, res, user);
    } catch (error) {
      return void answerError(res, outerId, error);
    }
    if (typeof body !== 'object' || body === null)
      return void answerError(res, null, new RequestMalformedError('Invalid request body type.'));
    const { id = null, method = '', params } = body;
    const known = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
    const setExtensions = () => {
      if (context.activatedExtensions) res.setHeader(HTTP_EXTENSION_HEADER, Array.from(context.activatedExtensions));
    };
    try {
      if (method !== 'GetExtendedAgentCard' && !paramsAreValid(params))
        throw new RequestMalformedError('Invalid method parameters.');
      if (params?.tenant) context.setTenant(String(params.tenant));
      if (!known) {
        const error = { code: A2A_ERROR_CODE.METHOD_NOT_FOUND, message: 'Invalid method.' };
        return void sendJson(res, 200, { jsonrpc: '2.0', id, error }, JSON_CONTENT_TYPE);
      }
      options.checkScopes?.(user, known.call, res);
      const version = context.requestedVersion;
      const decoded = known.decode(params) as Record<string, unknown>;
      Object.assign(decoded, requestFieldsOf(version, known.call, params ?? {}));
      const streaming = !known.encode;
      const outcome = options.path.run({ method: known.call, params: decoded, context, streaming } as never);
      if (streaming) {
        return await answerSse(res, outcome as Stream, {
          eventJson: (item) => ({
            jsonrpc: '2.0',
            id,
            result: responseJsonFor(version, StreamResponse.toJSON(item), item),
          }),
          failedFirst: (error) => answerError(res, outerId, error),
          errorJson: (error) => ({ jsonrpc: '2.0', id: outerId, error: errorForm(error, options) }),
          headers: setExtensions,
        });
      }
      const result = known.encode!(await (outcome as Promise<unknown>), version, decoded);
      setExtensions();
      sendJson(res, 200, { jsonrpc: '2.0', id, result }, JSON_CONTENT_TYPE);
    } catch (error) {
      if (res.headersSent) return void (res.writableEnded || res.end());
      setExtensions();
      answerError(res, id, error);
    }
  };
}

/** The JSON-RPC `error` of a failure inside a stream already under way. */
function errorForm(error: unknown, options: JsonRpcBindingOptions): unknown {
  const forms = transportForms(error);
  if (forms.internal !== undefined) options.onInternal(forms.internal);
  return forms.jsonRpc.error;
}

/** JSON-RPC params as A2A takes them: an object, with no empty key. */
function paramsAreValid(params: unknown): params is Record<string, unknown> {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  return !Object.keys(params).includes('');
}
