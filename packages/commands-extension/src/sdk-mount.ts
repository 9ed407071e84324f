import type { AgentCard, StreamResponse, SubscribeToTaskRequest } from '@a2a-js/sdk';
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type DefaultRequestHandlerOptions,
  type ExecutionEventBusManager,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { withCommandsExtension } from './card.js';
import { InMemoryMessageClaimStore } from './message-claim-store.js';
import { MessageClaims } from './message-claims.js';
import { withoutCommandMetadata } from './metadata-guard.js';
import type { CommandRegistry } from './registry.js';
import { CommandsRequestHandler, type CommandsRequestHandlerOptions } from './request-handler.js';
import { sdkTaskPort } from './sdk-port.js';
import { isTerminal } from './wire.js';

/** What `mountCommandsOnSdk` needs: what a `DefaultRequestHandler` takes, and the commands. */
export interface SdkMountOptions {
  /** The agent's card, without the extension's entries: they are added, and kept up to date with the registry. */
  card: AgentCard;
  /** The agent; it never sees a command message. */
  executor: AgentExecutor;
  /** The commands to answer. */
  registry: CommandRegistry;
  /** Where tasks are kept; default a new `InMemoryTaskStore`. Wrapped so that no task keeps the reply keys (CMD-6). */
  taskStore?: TaskStore;
  /** The event buses; default a new `DefaultExecutionEventBusManager`. */
  eventBusManager?: ExecutionEventBusManager;
  /** A message id handled once per user (CMD-13, CMD-34); default claims kept in memory. */
  claims?: MessageClaims;
  /** Passed to the SDK's `DefaultRequestHandler` as they are. */
  requestHandlerOptions?: DefaultRequestHandlerOptions;
  /** Told about a command handler that failed unexpectedly (the user gets a generic reply, CMD-12). */
  onHandlerError?: CommandsRequestHandlerOptions['onHandlerError'];
}

/**
 * The Commands extension mounted on the SDK's own `DefaultRequestHandler`, built here with the
 * agent's executor: what to give the SDK's transports (`jsonRpcHandler`, `restHandler`,
 * `grpcService`, `agentCardHandler`). It keeps every rule of the extension: the task store
 * keeps no reply keys (CMD-6), a resent message id is answered once (CMD-13), and a reply
 * reaches every stream open on its task, `SubscribeToTask` on an idle task included (CMD-8).
 */
export function mountCommandsOnSdk(options: SdkMountOptions): CommandsRequestHandler {
  const taskStore = withoutCommandMetadata(options.taskStore ?? new InMemoryTaskStore());
  const buses = options.eventBusManager ?? new DefaultExecutionEventBusManager();
  const sdk = new DefaultRequestHandler(
    withCommandsExtension(options.card, options.registry),
    taskStore,
    options.executor,
    buses,
    undefined,
    undefined,
    undefined,
    undefined,
    options.requestHandlerOptions,
  );
  return new SdkCommandsRequestHandler(sdk, taskStore, buses, {
    registry: options.registry,
    port: sdkTaskPort(taskStore, buses),
    claims: options.claims ?? new MessageClaims(new InMemoryMessageClaimStore()),
    onHandlerError: options.onHandlerError,
  });
}

/**
 * The SDK answers `SubscribeToTask` on a task without an event bus (a task a command created,
 * or one whose turn closed its bus) with the task alone and ends the stream: a reply posted
 * afterwards reaches nobody (CMD-8). Giving such a task its bus first, as the SDK itself keeps
 * one for a task waiting for input (`keepBusAliveStates`), leaves the subscription open on the
 * bus the port publishes replies on; the next turn on the task takes the same bus.
 */
class SdkCommandsRequestHandler extends CommandsRequestHandler {
  constructor(
    inner: DefaultRequestHandler,
    private readonly taskStore: TaskStore,
    private readonly buses: ExecutionEventBusManager,
    options: CommandsRequestHandlerOptions,
  ) {
    super(inner, options);
  }

  /** Not `async *`: the extension is activated at once, before the transport writes headers (CMD-17). */
  override resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    // The SDK's stream looks for the bus when first read, which is after `withBus` gave it one.
    return this.withBus(params.id, context, super.resubscribe(params, context));
  }

  private async *withBus(
    taskId: string,
    context: ServerCallContext,
    stream: AsyncGenerator<StreamResponse, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    if (!this.buses.getByTaskId(taskId, context)) {
      const task = await this.taskStore.load(taskId, context);
      if (task && !isTerminal(task.status?.state)) this.buses.createOrGetByTaskId(taskId, context);
    }
    yield* stream;
  }
}
