/**
 * A server span for each A2A call, the outermost step of the request path. Named and
 * attributed as a2a-java's OpenTelemetry module does it: the span is named after the A2A method
 * (`SendStreamingMessage`), and carries `gen_ai.agent.a2a.*` attributes (the method, the task,
 * context and message ids, the message's role and part count), plus `gen_ai.conversation.id`.
 * The caller's trace goes on: the `traceparent` its transport received (`TRACE_CARRIER_KEY`)
 * is the span's parent. A stream's span lasts as long as the stream. Never the message's content.
 */
import { context, propagation, SpanKind, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { Role, type Message } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { ATTR_GEN_AI_CONVERSATION_ID } from '@opentelemetry/semantic-conventions/incubating';
import type { Call, Step, Stream } from '../a2a/index.js';
import { A2A_METHODS } from './metrics.js';
import { TRACE_CARRIER_KEY } from './propagation.js';
import { ATTR_A2A_TASK_ID, errorType, failSpan, inSpan, tracer, tracing } from './traces.js';

/** a2a-java's attribute names for the A2A side (`A2AObservabilityNames`). */
const A2A = {
  operation: 'gen_ai.agent.a2a.operation.name',
  contextId: 'gen_ai.agent.a2a.context_id',
  messageId: 'gen_ai.agent.a2a.message_id',
  role: 'gen_ai.agent.a2a.role',
  extensions: 'gen_ai.agent.a2a.extensions',
  parts: 'gen_ai.agent.a2a.parts.number',
  configId: 'gen_ai.agent.a2a.config_id',
} as const;

/** The `spans` step: every call in a server span of its own. */
export function spansStep(): Step {
  return {
    name: 'spans',
    around(call, next) {
      if (!tracing()) return next();
      const method = A2A_METHODS[call.method];
      const { span, parent } = serverSpan(method, attributesOf(call), call.context);
      if (!call.streaming) return inSpan(span, parent, () => next() as Promise<unknown>);
      // The stream is opened at once, as the steps below expect (the commands step activates its
      // extension before the transport writes its headers); each of its steps then runs in the span.
      const active = trace.setSpan(parent, span);
      try {
        return spanned(
          context.with(active, () => next() as Stream),
          span,
          active,
        );
      } catch (error) {
        failSpan(span, errorType(error), error instanceof Error ? error.message : undefined);
        span.end();
        throw error;
      }
    },
  };
}

function attributesOf(call: Call): Attributes {
  switch (call.method) {
    case 'sendMessage':
    case 'sendMessageStream':
      return messageAttributes(call.params.message);
    case 'getTask':
    case 'cancelTask':
    case 'resubscribe':
      return { [ATTR_A2A_TASK_ID]: call.params.id };
    case 'listTasks':
      return call.params.contextId ? contextAttributes(call.params.contextId) : {};
    case 'listTaskPushNotificationConfigs':
      return { [ATTR_A2A_TASK_ID]: call.params.taskId };
    case 'createTaskPushNotificationConfig':
    case 'getTaskPushNotificationConfig':
    case 'deleteTaskPushNotificationConfig':
      return pushAttributes(call.params);
    case 'getAuthenticatedExtendedAgentCard':
      return {};
  }
}

/** `stream` read in `active` (the turn it starts, and what that calls, are the span's children); the span ends with it. */
async function* spanned(stream: Stream, span: Span, active: Context): Stream {
  let done = false;
  try {
    for (;;) {
      const next = await context.with(active, () => stream.next());
      if (next.done) break;
      yield next.value;
    }
    done = true;
  } catch (error) {
    done = true;
    failSpan(span, errorType(error), error instanceof Error ? error.message : undefined);
    throw error;
  } finally {
    if (!done) await stream.return(undefined); // the reader left early
    span.end();
  }
}

/** The call's server span, a child of the caller's trace when the call came with one. */
function serverSpan(
  method: string,
  attributes: Attributes,
  callContext: ServerCallContext,
): { span: Span; parent: Context } {
  const carrier = callContext.state.get(TRACE_CARRIER_KEY);
  const parent = carrier ? propagation.extract(context.active(), carrier) : context.active();
  const span = tracer().startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { [A2A.operation]: method, ...attributes } },
    parent,
  );
  return { span, parent };
}

function contextAttributes(contextId: string): Attributes {
  return { [A2A.contextId]: contextId, [ATTR_GEN_AI_CONVERSATION_ID]: contextId };
}

function messageAttributes(message: Message | undefined): Attributes {
  if (!message) return {};
  return {
    ...(message.taskId ? { [ATTR_A2A_TASK_ID]: message.taskId } : {}),
    ...(message.contextId ? contextAttributes(message.contextId) : {}),
    [A2A.messageId]: message.messageId,
    [A2A.role]: Role[message.role] ?? 'ROLE_UNSPECIFIED',
    ...(message.extensions?.length ? { [A2A.extensions]: message.extensions.join(',') } : {}),
    [A2A.parts]: message.parts?.length ?? 0,
  };
}

function pushAttributes(params: { taskId?: string; id?: string }): Attributes {
  return {
    ...(params.taskId ? { [ATTR_A2A_TASK_ID]: params.taskId } : {}),
    ...(params.id ? { [A2A.configId]: params.id } : {}),
  };
}
