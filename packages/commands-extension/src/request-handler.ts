import type {
  AgentCard,
  GetExtendedAgentCardRequest,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { PushNotificationNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import { withCommandsExtension } from './card.js';
import { clientGoneSignal, detachedOnClientGone } from './client-gone.js';
import { DelegatingRequestHandler } from './delegating-handler.js';
import { COMMANDS_EXTENSION_URI } from './wire.js';
import { CommandRunner, type CommandRunnerOptions } from './runner.js';
import { parseCommand } from './parse.js';
import type { CommandRegistry } from './registry.js';

/** What `CommandsRequestHandler` needs besides the handler it wraps: the commands, the port, and optional hooks. */
export interface CommandsRequestHandlerOptions extends Omit<CommandRunnerOptions, 'getTask'> {
  /** The commands to answer. */
  registry: CommandRegistry;
  /** The card to serve, before the extension entry is added; default: the inner handler's. */
  baseCard?: () => Promise<AgentCard> | AgentCard;
  /**
   * Told about an error of a turn's stream that is read on after its client went away (the
   * turn is still stored, see `a2a/client-gone.ts`); nobody else is left to hear of it.
   */
  onStreamError?: (error: unknown) => void;
  /**
   * Takes the push-notification config a command message carries
   * (`configuration.taskPushNotificationConfig`): checks it (rejecting with the protocol's error
   * when it is refused) and resolves with what stores it for the command's task, which runs
   * before the command's first write to the task, its creation included, so that every event of
   * the task reaches the config. `existing`: the message names a task. Without it, a command
   * message carrying a config is refused (`PushNotificationNotSupportedError`), never dropped.
   */
  pushConfig?: (
    config: TaskPushNotificationConfig,
    context: ServerCallContext,
    existing: boolean,
  ) => Promise<(taskId: string) => Promise<void>>;
}

/**
 * The Commands extension as a request handler wrapped around any other (usually the SDK's
 * `DefaultRequestHandler`, or the harness's task engine). A command message never reaches the
 * inner handler: sending it there would run a second execution on a busy task's bus, which
 * closes the running turn's streams and loses its events (see the SDK notes). Tasks are read
 * through the inner handler and replies posted through the port (`port.ts`); that is all the
 * extension needs of the server it is mounted on. Everything else passes through untouched,
 * except that the card gains the extension entry and the extension is echoed in the
 * `A2A-Extensions` response header when the client asked for it (CMD-17).
 */
export class CommandsRequestHandler extends DelegatingRequestHandler {
  private readonly runner: CommandRunner;

  constructor(
    inner: A2ARequestHandler,
    private readonly options: CommandsRequestHandlerOptions,
  ) {
    super(inner);
    this.runner = new CommandRunner({
      ...options,
      getTask: (id, context) => this.inner.getTask({ tenant: context.tenant ?? '', id }, context),
    });
  }

  /** The inner card plus the extension entry, built now from the registry (CMD-14, CMD-16). */
  /** Echoes the extension in the `A2A-Extensions` response header when the client asked for it (CMD-17). */
  protected override onCall(context: ServerCallContext): void {
    if (context.requestedExtensions?.includes(COMMANDS_EXTENSION_URI))
      context.addActivatedExtension(COMMANDS_EXTENSION_URI);
  }

  override async getAgentCard(): Promise<AgentCard> {
    const base = this.options.baseCard ? await this.options.baseCard() : await this.inner.getAgentCard();
    return withCommandsExtension(base, this.options.registry);
  }

  override async getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    this.onCall(context);
    return withCommandsExtension(
      await this.inner.getAuthenticatedExtendedAgentCard(params, context),
      this.options.registry,
    );
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    this.onCall(context);
    const command = this.recognise(params);
    if (!command) return this.inner.sendMessage(params, context);
    const outcome = await this.runner.run(params.message!, command, context, await this.pushFor(params, context));
    if (outcome.followUp) void drain(outcome.followUp()).catch(this.streamError);
    const task = { ...outcome.task, status: outcome.reply.status };
    return applyHistoryLength(task, params.configuration?.historyLength);
  }

  /**
   * Not `async *`: the extension must be activated before the transport writes headers (CMD-17).
   * A turn's stream ends for its client as soon as the client goes away; the turn goes on.
   */
  override sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    this.onCall(context);
    const command = this.recognise(params);
    if (!command)
      return detachedOnClientGone(
        this.inner.sendMessageStream(params, context),
        clientGoneSignal(context),
        this.streamError,
      );
    return this.streamCommand(params, command, context);
  }

  private readonly streamError = (error: unknown) => this.options.onStreamError?.(error);

  private recognise(params: SendMessageRequest) {
    const message = params.message;
    if (!message) return undefined;
    if (!message.messageId) throw new RequestMalformedError('message.messageId is required.');
    return parseCommand(message, (name) => this.options.registry.has(name));
  }

  /** What stores the message's push-notification config with the command's task; none without one. */
  private async pushFor(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): Promise<((taskId: string) => Promise<void>) | undefined> {
    const config = params.configuration?.taskPushNotificationConfig;
    if (!config) return undefined;
    if (!this.options.pushConfig)
      throw new PushNotificationNotSupportedError(
        'This server takes no push-notification config on a command message: create it with CreateTaskPushNotificationConfig.',
      );
    return this.options.pushConfig(config, context, Boolean(params.message?.taskId));
  }

  private async *streamCommand(
    params: SendMessageRequest,
    command: { name: string; args: string },
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const outcome = await this.runner.run(params.message!, command, context, await this.pushFor(params, context));
    yield {
      payload: { $case: 'task', value: applyHistoryLength(outcome.taskBefore, params.configuration?.historyLength) },
    };
    yield { payload: { $case: 'statusUpdate', value: outcome.reply } };
    if (!outcome.followUp) return;
    // What the command started (a resumed turn) follows the reply on the same stream, which keeps
    // one task event at its head: the started work's own task event is left out.
    for await (const event of detachedOnClientGone(outcome.followUp(), clientGoneSignal(context), this.streamError)) {
      if (event.payload?.$case !== 'task') yield event;
    }
  }
}

/** Reads a stream to its end: what stores a turn's events when no client follows it. */
async function drain(stream: AsyncGenerator<unknown, void, undefined>): Promise<void> {
  while (!(await stream.next()).done);
}

/**
 * How much history an answer to `SendMessage` carries when the client did not say
 * (`historyLength` unset): the message sent and its reply. A2A lets a server apply a lower
 * limit than "all" there ("MAY apply a lower limit"), and it matters: the whole history of a
 * long conversation, serialised for every answer, made a command on a 5,000-message task five
 * times slower than on a new one, and a turn on a 10,000-message task answered with 5.6 MB.
 * `GetTask` still returns everything. Turns follow the same rule (runtime/blocking-send.ts).
 */
export const DEFAULT_ANSWER_HISTORY = 2;

/** The `historyLength` rule the SDK applies to the tasks it returns, with the default above. */
function applyHistoryLength(task: Task, historyLength: number | undefined): Task {
  const length = historyLength ?? DEFAULT_ANSWER_HISTORY;
  return { ...task, history: length <= 0 ? [] : task.history.slice(-length) };
}
