/**
 * A server span for each A2A call, the outermost step of the request path. Named and
 * attributed as a2a-java's OpenTelemetry module does it: the span is named after the A2A method
 * (`SendStreamingMessage`), and carries `gen_ai.agent.a2a.*` attributes (the method, the task,
 * context and message ids, the message's role and part count), plus `gen_ai.conversation.id`.
 * The caller's trace goes on: the `traceparent` its transport received (`TRACE_CARRIER_KEY`)
 * is the span's parent. A stream's span lasts as long as the stream. Never the message's content.
 */
import { context, propagation, SpanKind, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import {
  Role,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTasksRequest,
  type Message,
  type AgentCard,
  type ListTasksResponse,
  type ListTaskPushNotificationConfigsResponse,
  type Task,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { ATTR_GEN_AI_CONVERSATION_ID } from '@opentelemetry/semantic-conventions/incubating';
import { DelegatingRequestHandler } from '../a2a/index.js';
import { TRACE_CARRIER_KEY } from './propagation.js';
import { ATTR_A2A_TASK_ID, errorType, failSpan, inSpan, tracer } from './traces.js';

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

export class A2ASpans extends DelegatingRequestHandler {
  constructor(inner: A2ARequestHandler) {
    super(inner);
  }

  override sendMessage(params: SendMessageRequest, callContext: ServerCallContext): Promise<Message | Task> {
    return this.call('SendMessage', messageAttributes(params.message), callContext, () =>
      this.inner.sendMessage(params, callContext),
    );
  }

  override sendMessageStream(
    params: SendMessageRequest,
    callContext: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.stream('SendStreamingMessage', messageAttributes(params.message), callContext, () =>
      this.inner.sendMessageStream(params, callContext),
    );
  }

  override getTask(params: GetTaskRequest, callContext: ServerCallContext): Promise<Task> {
    return this.call('GetTask', { [ATTR_A2A_TASK_ID]: params.id }, callContext, () =>
      this.inner.getTask(params, callContext),
    );
  }

  override listTasks(params: ListTasksRequest, callContext: ServerCallContext): Promise<ListTasksResponse> {
    const attributes = params.contextId ? contextAttributes(params.contextId) : {};
    return this.call('ListTasks', attributes, callContext, () => this.inner.listTasks(params, callContext));
  }

  override cancelTask(params: CancelTaskRequest, callContext: ServerCallContext): Promise<Task> {
    return this.call('CancelTask', { [ATTR_A2A_TASK_ID]: params.id }, callContext, () =>
      this.inner.cancelTask(params, callContext),
    );
  }

  override resubscribe(
    params: SubscribeToTaskRequest,
    callContext: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.stream('SubscribeToTask', { [ATTR_A2A_TASK_ID]: params.id }, callContext, () =>
      this.inner.resubscribe(params, callContext),
    );
  }

  override getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    callContext: ServerCallContext,
  ): Promise<AgentCard> {
    return this.call('GetExtendedAgentCard', {}, callContext, () =>
      this.inner.getAuthenticatedExtendedAgentCard(params, callContext),
    );
  }

  override createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    callContext: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.call('CreateTaskPushNotificationConfig', pushAttributes(params), callContext, () =>
      this.inner.createTaskPushNotificationConfig(params, callContext),
    );
  }

  override getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    callContext: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.call('GetTaskPushNotificationConfig', pushAttributes(params), callContext, () =>
      this.inner.getTaskPushNotificationConfig(params, callContext),
    );
  }

  override listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    callContext: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.call('ListTaskPushNotificationConfigs', { [ATTR_A2A_TASK_ID]: params.taskId }, callContext, () =>
      this.inner.listTaskPushNotificationConfigs(params, callContext),
    );
  }

  override deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    callContext: ServerCallContext,
  ): Promise<void> {
    return this.call('DeleteTaskPushNotificationConfig', pushAttributes(params), callContext, () =>
      this.inner.deleteTaskPushNotificationConfig(params, callContext),
    );
  }

  private call<T>(method: string, attributes: Attributes, callContext: ServerCallContext, run: () => Promise<T>) {
    const { span, parent } = serverSpan(method, attributes, callContext);
    return inSpan(span, parent, run);
  }

  /**
   * The stream is opened at once, as the steps below expect (the commands step activates its
   * extension before the transport writes its headers); each of its steps then runs in the span.
   */
  private stream(
    method: string,
    attributes: Attributes,
    callContext: ServerCallContext,
    open: () => AsyncGenerator<StreamResponse, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { span, parent } = serverSpan(method, attributes, callContext);
    const active = trace.setSpan(parent, span);
    try {
      return spanned(context.with(active, open), span, active);
    } catch (error) {
      failSpan(span, errorType(error), error instanceof Error ? error.message : undefined);
      span.end();
      throw error;
    }
  }
}

/** `stream` read in `active` (the turn it starts, and what that calls, are the span's children); the span ends with it. */
async function* spanned(
  stream: AsyncGenerator<StreamResponse, void, undefined>,
  span: Span,
  active: Context,
): AsyncGenerator<StreamResponse, void, undefined> {
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
