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
import { DelegatingRequestHandler } from '../a2a/index.js';
import { A2A_METHODS, type A2AMethodName, type HarnessMetrics } from './metrics.js';

/**
 * The request path's outermost step: counts every A2A call of every transport by method and
 * outcome, times it (a stream until it ends), and keeps the number of streams open. Outside
 * the error mapping, it sees each failure as the A2A error the client receives.
 */
export class RequestMetrics extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly metrics: HarnessMetrics,
  ) {
    super(inner);
  }

  override getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    return this.timed(A2A_METHODS.getAuthenticatedExtendedAgentCard, () =>
      this.inner.getAuthenticatedExtendedAgentCard(params, context),
    );
  }

  override sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return this.timed(A2A_METHODS.sendMessage, () => this.inner.sendMessage(params, context));
  }

  override sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.timedStream(A2A_METHODS.sendMessageStream, () => this.inner.sendMessageStream(params, context));
  }

  override getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.timed(A2A_METHODS.getTask, () => this.inner.getTask(params, context));
  }

  override listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.timed(A2A_METHODS.listTasks, () => this.inner.listTasks(params, context));
  }

  override cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.timed(A2A_METHODS.cancelTask, () => this.inner.cancelTask(params, context));
  }

  override resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.timedStream(A2A_METHODS.resubscribe, () => this.inner.resubscribe(params, context));
  }

  override createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.timed(A2A_METHODS.createTaskPushNotificationConfig, () =>
      this.inner.createTaskPushNotificationConfig(params, context),
    );
  }

  override getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.timed(A2A_METHODS.getTaskPushNotificationConfig, () =>
      this.inner.getTaskPushNotificationConfig(params, context),
    );
  }

  override listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.timed(A2A_METHODS.listTaskPushNotificationConfigs, () =>
      this.inner.listTaskPushNotificationConfigs(params, context),
    );
  }

  override deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return this.timed(A2A_METHODS.deleteTaskPushNotificationConfig, () =>
      this.inner.deleteTaskPushNotificationConfig(params, context),
    );
  }

  private async timed<T>(method: A2AMethodName, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      this.metrics.requestEnded(method, started);
      return result;
    } catch (error) {
      this.metrics.requestEnded(method, started, error);
      throw error;
    }
  }

  /** Opened at once, as the steps below expect (they act before a transport writes its headers). */
  private timedStream(
    method: A2AMethodName,
    open: () => AsyncGenerator<StreamResponse, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const started = performance.now();
    let stream: AsyncGenerator<StreamResponse, void, undefined>;
    try {
      stream = open();
    } catch (error) {
      this.metrics.requestEnded(method, started, error);
      throw error;
    }
    return this.reading(stream, method, started);
  }

  /**
   * Counted open from its first read: a generator returned before then never runs its body, so
   * could never count itself closed. A stream its client left early counts as `ok`: nothing failed.
   */
  private async *reading(
    stream: AsyncGenerator<StreamResponse, void, undefined>,
    method: A2AMethodName,
    started: number,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    let failure: unknown;
    this.metrics.streamOpened(method);
    try {
      yield* stream;
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      this.metrics.streamClosed(method);
      this.metrics.requestEnded(method, started, failure);
    }
  }
}
