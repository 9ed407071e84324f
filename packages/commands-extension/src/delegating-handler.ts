import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';

/**
 * A request handler that passes every call to another: the base of the wrappers that add one
 * behaviour in front of the SDK's handler and override only the calls they change.
 */
export class DelegatingRequestHandler implements A2ARequestHandler {
  constructor(protected readonly inner: A2ARequestHandler) {}

  /**
   * Called first, synchronously, by every call that has a context, before anything is sent:
   * the place for what must hold on every call (such as activating an extension, which must
   * happen before a streaming transport writes its headers).
   */
  protected onCall(_context: ServerCallContext): void {}

  /**
   * Whether this handler does something of its own for `method` rather than only pass it on (it
   * overrides the method, or `onCall`, which every call with a context runs): a composed path
   * leaves it out of the calls it would only pass on.
   */
  intercepts(method: keyof A2ARequestHandler): boolean {
    const base = DelegatingRequestHandler.prototype;
    if (method !== 'getAgentCard' && this.onCall !== base.onCall) return true;
    return this[method] !== base[method];
  }

  getAgentCard(): Promise<AgentCard> {
    return this.inner.getAgentCard();
  }

  getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    this.onCall(context);
    return this.inner.getAuthenticatedExtendedAgentCard(params, context);
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    this.onCall(context);
    return this.inner.sendMessage(params, context);
  }

  sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    this.onCall(context);
    return this.inner.sendMessageStream(params, context);
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    this.onCall(context);
    return this.inner.getTask(params, context);
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    this.onCall(context);
    return this.inner.listTasks(params, context);
  }

  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    this.onCall(context);
    return this.inner.cancelTask(params, context);
  }

  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    this.onCall(context);
    return this.inner.resubscribe(params, context);
  }

  createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.onCall(context);
    return this.inner.createTaskPushNotificationConfig(params, context);
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.onCall(context);
    return this.inner.getTaskPushNotificationConfig(params, context);
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    this.onCall(context);
    return this.inner.listTaskPushNotificationConfigs(params, context);
  }

  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    this.onCall(context);
    return this.inner.deleteTaskPushNotificationConfig(params, context);
  }
}
