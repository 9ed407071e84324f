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
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { compose, handlerTerminal, type ComposedSteps, type Step, type Stream } from './steps.js';

/**
 * The composed steps as the SDK's gRPC transport takes a request handler (the HTTP bindings run
 * the steps themselves): each method builds its
 * call and runs it through the steps. The one class here that lists the A2A methods; no step does.
 *
 * The agent card is no call: the SDK's transport asks for it on every call, only to check the
 * protocol version a client asks for against the card's interfaces (and, over HTTP+JSON,
 * whether a capability is on), both fixed while serving. So the first card built is kept for
 * them; the card's own route builds it per request (CMD-16). Building it on every call was
 * about 2% of a command's CPU (bench/RESULTS.md).
 */
export class StepsRequestHandler implements A2ARequestHandler {
  private card: Promise<AgentCard> | undefined;

  constructor(
    private readonly steps: Pick<ComposedSteps, 'run'>,
    private readonly buildCard: () => Promise<AgentCard>,
  ) {}

  getAgentCard(): Promise<AgentCard> {
    if (!this.card) {
      const building = this.buildCard();
      this.card = building;
      building.catch(() => {
        if (this.card === building) this.card = undefined; // a failure is not kept: the next call builds again
      });
    }
    return this.card;
  }

  getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    return this.steps.run({ method: 'getAuthenticatedExtendedAgentCard', params, context, streaming: false });
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return this.steps.run({ method: 'sendMessage', params, context, streaming: false });
  }

  sendMessageStream(params: SendMessageRequest, context: ServerCallContext): Stream {
    return this.steps.run({ method: 'sendMessageStream', params, context, streaming: true });
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.steps.run({ method: 'getTask', params, context, streaming: false });
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.steps.run({ method: 'listTasks', params, context, streaming: false });
  }

  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.steps.run({ method: 'cancelTask', params, context, streaming: false });
  }

  resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): Stream {
    return this.steps.run({ method: 'resubscribe', params, context, streaming: true });
  }

  createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.steps.run({ method: 'createTaskPushNotificationConfig', params, context, streaming: false });
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.steps.run({ method: 'getTaskPushNotificationConfig', params, context, streaming: false });
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.steps.run({ method: 'listTaskPushNotificationConfigs', params, context, streaming: false });
  }

  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return this.steps.run({ method: 'deleteTaskPushNotificationConfig', params, context, streaming: false });
  }
}

/** `steps` composed around `handler`, as the SDK's transports (gRPC, a bare SDK server's) take a handler. */
export function withSteps(handler: A2ARequestHandler, steps: readonly Step[]): A2ARequestHandler {
  return new StepsRequestHandler(compose(steps, handlerTerminal(handler)), () => handler.getAgentCard());
}
