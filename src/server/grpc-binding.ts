/**
 * The A2A gRPC binding, the project's own on grpc-js: the SDK gives the service definition and
 * the message types with their protobuf codecs, and nothing else. For each call it admits it,
 * checks its token and its request, builds the call's context as a plain value, runs the call
 * through the request path (`compose`, a2a/steps.ts) and writes the answer, or each event of a
 * stream, or the error in its gRPC form (`transportForms`, a2a-errors.ts). Each call is logged
 * once when it ends.
 */
import { randomUUID } from 'node:crypto';
import {
  Metadata,
  status,
  type MethodDefinition,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  HTTP_EXTENSION_HEADER,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
  type Message,
  type SendMessageResponse,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { ServerCallContext, UnauthenticatedUser, type User } from '@a2a-js/sdk/server';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import type { Call, CallMethod, ComposedSteps, Stream } from '../a2a/index.js';
import { requestFieldsOfProto, responseProtoFor } from '../a2a/version-proto.js';
import { describeError, type Logger } from '../log.js';
import type { Admission } from './admission.js';
import { transportForms, type GrpcForm } from './a2a-errors.js';
import type { Authenticator } from './authentication.js';
import { boundedDefinition, DecodedRequest, grpcRefusal, requestOf, type ToJson } from './grpc-edge.js';
import { callContextOf, goneOn } from './call-context.js';
import { isSpokenVersion, versionRefusal } from './protocol-version.js';

export interface GrpcBindingOptions {
  log: Logger;
  /** When set, every call needs `authorization: Bearer <token>` metadata it accepts, with the scopes its method needs. */
  authenticator?: Authenticator;
  /** Admits or refuses every call before anything else (`admission.ts`), as the HTTP routes are. */
  admission?: Admission;
}

/** What the request path is to the binding: something that runs a call. */
export type CallRunner = Pick<ComposedSteps, 'run'>;

/** One RPC of the service: the call it becomes, and how its result becomes the response message. */
interface Rpc {
  method: CallMethod;
  /** The request's ProtoJSON form, for the edge schema; none where the schema knows no params. */
  toJSON?: ToJson;
  /** The response message for the call's result, where it is not the result itself. */
  answer?: (result: never) => unknown;
}

/** Every RPC of the SDK's service definition: one it adds fails to compile until listed here. */
const RPCS = {
  sendMessage: { method: 'sendMessage', toJSON: SendMessageRequest.toJSON, answer: sendMessageResponse },
  sendStreamingMessage: { method: 'sendMessageStream', toJSON: SendMessageRequest.toJSON },
  getTask: { method: 'getTask', toJSON: GetTaskRequest.toJSON },
  listTasks: { method: 'listTasks', toJSON: ListTasksRequest.toJSON },
  cancelTask: { method: 'cancelTask', toJSON: CancelTaskRequest.toJSON },
  subscribeToTask: { method: 'resubscribe', toJSON: SubscribeToTaskRequest.toJSON },
  createTaskPushNotificationConfig: {
    method: 'createTaskPushNotificationConfig',
    toJSON: TaskPushNotificationConfig.toJSON,
  },
  getTaskPushNotificationConfig: {
    method: 'getTaskPushNotificationConfig',
    toJSON: GetTaskPushNotificationConfigRequest.toJSON,
  },
  listTaskPushNotificationConfigs: {
    method: 'listTaskPushNotificationConfigs',
    toJSON: ListTaskPushNotificationConfigsRequest.toJSON,
  },
  deleteTaskPushNotificationConfig: {
    method: 'deleteTaskPushNotificationConfig',
    toJSON: DeleteTaskPushNotificationConfigRequest.toJSON,
    answer: () => ({}), // google.protobuf.Empty
  },
  getExtendedAgentCard: { method: 'getAuthenticatedExtendedAgentCard' },
} satisfies Record<keyof typeof A2AService, Rpc> as Record<string, Rpc>;

/** A blocking send's result, a task or a message, as the oneof of `SendMessageResponse`. */
function sendMessageResponse(result: Message | Task): SendMessageResponse {
  return 'messageId' in result
    ? { payload: { $case: 'message', value: result } }
    : { payload: { $case: 'task', value: result } };
}

/** The methods whose answer is, or holds, a Task or an event that carries a generation. */
const CARRIES_GENERATION: ReadonlySet<CallMethod> = new Set([
  'getTask',
  'cancelTask',
  'sendMessage',
  'sendMessageStream',
  'resubscribe',
]);

/**
 * The one place every answer of the binding is encoded: a unary response message, or one event
 * of a stream (a `StreamResponse`), for a call of `method` that asked for `version` (its
 * `a2a-version` metadata). The SDK's encoder for the method's response type, and for a 1.1
 * call A2A 1.1's `generation` field on its task or event (`version-proto.ts`); a 1.0 call's bytes
 * are exactly the SDK's.
 */
export function encodeFor(
  version: string,
  method: CallMethod,
  encode: (message: unknown) => Buffer,
  message: unknown,
): Buffer {
  const encoded = encode(message);
  if (!CARRIES_GENERATION.has(method)) return encoded;
  return Buffer.from(responseProtoFor(version, encoded, message as StreamResponse | Task));
}

/** A call's params: its decoded request, with A2A 1.1's fields read from its bytes for a 1.1 call. */
function paramsOf(call: AnyCall, method: CallMethod, context: ServerCallContext): unknown {
  const request = call.request;
  if (!(request instanceof DecodedRequest)) return request;
  const fields = requestFieldsOfProto(context.requestedVersion, method, request.bytes);
  return Object.keys(fields).length > 0 ? { ...(request.value as object), ...fields } : request.value;
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

type AnyCall = ServerUnaryCall<unknown, Buffer> | ServerWritableStream<unknown, Buffer>;

/** A call that may go on (its context, and what to call when it ends), or the status to refuse it with. */
type Opened =
  { context: ServerCallContext; end: (code: number) => void } | { refusal: GrpcForm; end: (code: number) => void };

/**
 * The service grpc-js serves: the SDK's definition, each request bounded before and while it is
 * decoded (`grpc-edge.ts`) and each answer already bytes ({@link encodeFor}), and the
 * implementation that runs each call through `path`.
 */
export function grpcBinding(
  path: CallRunner,
  options: GrpcBindingOptions,
): { definition: ServiceDefinition; implementation: UntypedServiceImplementation } {
  const definition = A2AService as ServiceDefinition;
  const implementation: UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(definition)) {
    const rpc = RPCS[name];
    if (rpc) implementation[name] = serve(name, rpc, method, path, options);
  }
  const wire = Object.entries(boundedDefinition(definition)).map(([name, method]) => [
    name,
    { ...method, responseSerialize: (bytes: Buffer) => bytes },
  ]);
  return { definition: Object.fromEntries(wire) as ServiceDefinition, implementation };
}

function serve(
  name: string,
  rpc: Rpc,
  method: MethodDefinition<unknown, unknown>,
  path: CallRunner,
  options: GrpcBindingOptions,
): UntypedServiceImplementation[string] {
  const a2aName = method.path.slice(method.path.lastIndexOf('/') + 1);
  const encode = method.responseSerialize as (message: unknown) => Buffer;
  const open = (call: AnyCall): Promise<Opened> => opened(call, name, a2aName, rpc, options);
  const failure = (error: unknown): GrpcForm => {
    const forms = transportForms(error);
    // The errorMapping step logs what fails on the path; this is a failure of the binding itself.
    if (forms.internal !== undefined)
      options.log.error('grpc call failed', { rpc: a2aName, error: describeError(forms.internal) });
    return forms.grpc;
  };
  const callOf = (call: AnyCall, context: ServerCallContext) =>
    ({
      method: rpc.method,
      params: paramsOf(call, rpc.method, context),
      context,
      streaming: method.responseStream,
    }) as Call;
  const answer = (context: ServerCallContext, message: unknown) =>
    encodeFor(context.requestedVersion, rpc.method, encode, message);

  if (method.responseStream) {
    const streamed = async (call: ServerWritableStream<unknown, Buffer>) => {
      const started = await open(call);
      if ('refusal' in started) {
        started.end(started.refusal.code);
        call.emit('error', started.refusal);
        return;
      }
      const { context, end } = started;
      try {
        const events = path.run(callOf(call, context)) as Stream;
        call.sendMetadata(answerMetadata(context));
        for await (const event of events) {
          // Leaving the loop ends the stream for this client (the turn goes on: detachedOnClientGone).
          if (call.cancelled) break;
          call.write(answer(context, event));
        }
        end(call.cancelled ? status.CANCELLED : status.OK);
        call.end();
      } catch (error) {
        const form = failure(error);
        end(form.code);
        call.emit('error', form);
      }
    };
    // Every failure ends the call with its status inside; nothing is left to reject.
    return (call: ServerWritableStream<unknown, Buffer>) => void streamed(call);
  }
  const unary = async (call: ServerUnaryCall<unknown, Buffer>, callback: sendUnaryData<Buffer>) => {
    const started = await open(call);
    if ('refusal' in started) {
      started.end(started.refusal.code);
      callback(started.refusal, null);
      return;
    }
    const { context, end } = started;
    try {
      const result = await (path.run(callOf(call, context)) as Promise<unknown>);
      call.sendMetadata(answerMetadata(context));
      const message = rpc.answer ? rpc.answer(result as never) : result;
      const bytes = answer(context, message);
      end(status.OK);
      callback(null, bytes);
    } catch (error) {
      const form = failure(error);
      end(form.code);
      callback(form, null);
    }
  };
  return (call: ServerUnaryCall<unknown, Buffer>, callback: sendUnaryData<Buffer>) => void unary(call, callback);
}

/**
 * The start of every call, in order: admission (a call past the bounds ends UNAVAILABLE at
 * once, before it is logged or authenticated; an admitted one holds its place until it ends or
 * is cancelled), the bearer token (UNAUTHENTICATED; UNAVAILABLE while the identity provider is out
 * of reach) and its scopes for the method (PERMISSION_DENIED), the edge schema (INVALID_ARGUMENT,
 * `grpc-edge.ts`), the protocol version (FAILED_PRECONDITION), then the call's context. Every
 * call but one refused by admission is logged once when it ends: its method, status code,
 * duration, request id (`x-request-id` metadata or a UUID) and user. Never metadata values or
 * message content.
 */
async function opened(
  call: AnyCall,
  name: string,
  a2aName: string,
  rpc: Rpc,
  options: GrpcBindingOptions,
): Promise<Opened> {
  // Every call is new load: HTTP/2 carries any number of them on one connection.
  const admitted = options.admission?.admit(true);
  if (admitted && 'refused' in admitted) return { refusal: transportForms(admitted.refused).grpc, end: () => {} };
  const release = admitted?.release;
  if (release) call.once('cancelled', release);
  const first = (key: string): string | undefined => {
    const value = call.metadata.get(key)[0];
    return value === undefined ? undefined : String(value);
  };
  const offered = first('x-request-id');
  const requestId = offered !== undefined && SANE_REQUEST_ID.test(offered) ? offered : randomUUID();
  const started = process.hrtime.bigint();
  let user: User | undefined;
  let logged = false;
  const end = (code: number) => {
    release?.();
    if (logged) return;
    logged = true;
    const ms = Number((process.hrtime.bigint() - started) / 1000n) / 1000;
    options.log.info('grpc call', { requestId, method: name, code: status[code] ?? code, ms, user: user?.userName });
  };
  try {
    if (options.authenticator) {
      // The token first, then its scopes for this method: UNAUTHENTICATED, then PERMISSION_DENIED.
      const outcome = await options.authenticator.authenticate(call.metadata.get('authorization').map(String));
      if ('refusal' in outcome) return { refusal: transportForms(outcome.refusal).grpc, end };
      user = outcome.user;
      const denied = options.authenticator.scopeRefusal(user, rpc.method);
      if (denied) return { refusal: transportForms(denied).grpc, end };
    }
    const refused = grpcRefusal(a2aName, call.request, rpc.toJSON);
    if (refused) return { refusal: refused, end };
    const requestedVersion = first('a2a-version');
    if (!isSpokenVersion(requestedVersion))
      return { refusal: transportForms(new VersionNotSupportedError(versionRefusal(requestedVersion))).grpc, end };
    return { context: callContext(call, user ?? new UnauthenticatedUser(), requestedVersion!, first), end };
  } catch (error) {
    // A call that could not be opened still ends with a status (and frees its place), never hangs.
    const forms = transportForms(error);
    if (forms.internal !== undefined)
      options.log.error('grpc call failed', { rpc: a2aName, error: describeError(forms.internal) });
    return { refusal: forms.grpc, end };
  }
}

/** The call's context, a plain value (`callContextOf`), the client gone when it cancels the call. */
function callContext(
  call: AnyCall,
  user: User,
  requestedVersion: string,
  first: (key: string) => string | undefined,
): ServerCallContext {
  return callContextOf({
    // The extensions asked for may come in several metadata values, as HTTP joins repeated headers.
    header: (name: string) =>
      name === HTTP_EXTENSION_HEADER ? call.metadata.get(name).map(String).join(',') : first(name),
    user,
    requestedVersion,
    tenant: (requestOf(call.request) as { tenant?: string } | undefined)?.tenant,
    gone: () => cancelledSignal(call),
  });
}

/** Fires when the client cancels the call (or its connection drops). */
export function cancelledSignal(call: {
  cancelled: boolean;
  once(event: 'cancelled', listener: () => void): unknown;
}): AbortSignal {
  return goneOn(call, 'cancelled', call.cancelled);
}

/** The answer's leading metadata: the extensions the call activated (`A2A-Extensions`), as on HTTP. */
function answerMetadata(context: ServerCallContext): Metadata {
  const metadata = new Metadata();
  if (context.activatedExtensions?.length) metadata.set(HTTP_EXTENSION_HEADER, context.activatedExtensions.join(','));
  return metadata;
}
