/**
 * A gRPC client interceptor that checks every message the SDK's gRPC transport receives, as
 * decoded from the wire (before the transport unwraps a `SendMessageResponse`). Each message
 * is turned into its JSON form with the SDK's generated `toJSON`, which leaves out what the
 * binary form does not carry (an empty string, list or zero enum is indistinguishable from an
 * absent one there), and then checked with the same schemas as the JSON bindings: a missing
 * REQUIRED field, an empty REQUIRED list or an unknown enum value (`UNRECOGNIZED`) is reported.
 *
 * A bad message is not passed on: the caller gets status INTERNAL at once, whose details name
 * the field and the rule, the call underneath is canceled and whatever else it receives is
 * dropped. (Ending the call with `cancelWithStatus` instead would hang: grpc-js holds a status
 * back until the message being intercepted has been passed on.)
 */
import { InterceptingCall, Metadata, status as GrpcStatus, type Interceptor } from '@grpc/grpc-js';
import {
  AgentCard,
  ListTasksResponse,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { answerViolations, StreamCheck, STREAMING_METHODS, type A2ACall, type A2AMethod } from './a2a-calls.js';
import { violation } from './a2a-violations.js';

/** The SDK's JSON conversion of each answer type, by method (`service A2AService` of a2a.proto). */
const TO_JSON: Partial<Record<A2AMethod, (message: any) => unknown>> = {
  SendMessage: SendMessageResponse.toJSON,
  SendStreamingMessage: StreamResponse.toJSON,
  SubscribeToTask: StreamResponse.toJSON,
  GetTask: Task.toJSON,
  CancelTask: Task.toJSON,
  ListTasks: ListTasksResponse.toJSON,
  GetExtendedAgentCard: AgentCard.toJSON,
  CreateTaskPushNotificationConfig: TaskPushNotificationConfig.toJSON,
  GetTaskPushNotificationConfig: TaskPushNotificationConfig.toJSON,
};

/** Checks each received message of every call it intercepts. */
export const checkingGrpcInterceptor: Interceptor = (options, nextCall) => {
  const method = options.method_definition.path.split('/').pop() as A2AMethod;
  const toJSON = TO_JSON[method];
  let call: A2ACall = { method, params: {} };
  let stream: StreamCheck | undefined;
  let count = 0;
  const intercepting: InterceptingCall = new InterceptingCall(nextCall(options), {
    sendMessage(request, next) {
      call = {
        method,
        params: {
          historyLength: request?.configuration?.historyLength ?? request?.historyLength,
          pageSize: request?.pageSize,
          includeArtifacts: request?.includeArtifacts,
        },
      };
      if (STREAMING_METHODS.has(method)) stream = new StreamCheck(call, ' (gRPC)');
      next(request);
    },
    start(metadata, caller, next) {
      let failed = false;
      next(metadata, {
        onReceiveMessage(message, nextMessage) {
          if (failed) return;
          // grpc-js hands a unary call that ended in an error status a null message.
          if (!toJSON || message === null || message === undefined) return nextMessage(message);
          let problems: string[];
          try {
            const json = toJSON(message);
            problems = stream
              ? stream.event(json)
              : answerViolations(call, json, `${method} (gRPC) message ${++count}`, true);
          } catch (error) {
            // An exception here would be swallowed by grpc-js and leave the call hanging.
            problems = [`${method} (gRPC): the check could not read the message: ${String(error)}`];
          }
          if (problems.length === 0) return nextMessage(message);
          failed = true;
          caller.onReceiveStatus({
            code: GrpcStatus.INTERNAL,
            details: violation(problems).message,
            metadata: new Metadata(),
          });
          intercepting.cancelWithStatus(GrpcStatus.CANCELLED, 'the answer broke A2A 1.0');
        },
        onReceiveStatus(status, nextStatus) {
          if (!failed) nextStatus(status);
        },
      });
    },
  });
  return intercepting;
};
