import type {
  AgentCard,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { PushNotificationNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import { withCommandsExtension, type CardAudience } from './card.js';
import { clientGoneSignal, detachedOnClientGone } from './client-gone.js';
import { COMMANDS_EXTENSION_URI } from './wire.js';
import { CommandRunner, type CommandRunnerOptions } from './runner.js';
import { parseCommand } from './parse.js';
import type { CommandRegistry } from './registry.js';

type Stream = AsyncGenerator<StreamResponse, void, undefined>;

/** What `CommandCalls` needs: the commands, the port, a way to read a task, and optional hooks. */
export interface CommandCallsOptions extends CommandRunnerOptions {
  /** The commands to answer. */
  registry: CommandRegistry;
  /**
   * Told about an error of a turn's stream that is read on after its client went away (the
   * turn is still stored, see `client-gone.ts`); nobody else is left to hear of it.
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
 * What the Commands extension does to a call, around whatever else answers it (`next`): a
 * command message is answered here and never goes on; anything else goes on untouched. A
 * server's request path calls it: `CommandsRequestHandler` wraps a request handler with it, and
 * a path made of steps can call it from a step of its own.
 */
export class CommandCalls {
  private readonly runner: CommandRunner;

  constructor(private readonly options: CommandCallsOptions) {
    this.runner = new CommandRunner(options);
  }

  /**
   * Echoes the extension in the `A2A-Extensions` response header when the client asked for it
   * (CMD-17). Called first, synchronously, on every call with a context: before a streaming
   * transport writes its headers.
   */
  activate(context: ServerCallContext): void {
    if (context.requestedExtensions?.includes(COMMANDS_EXTENSION_URI))
      context.addActivatedExtension(COMMANDS_EXTENSION_URI);
  }

  /**
   * `card` plus the extension entry, built now from the registry (CMD-14, CMD-16): the public
   * card's commands, or with `audience` `authenticated` (the extended card) all of them.
   */
  card(card: AgentCard, audience: CardAudience = 'public'): AgentCard {
    return withCommandsExtension(card, this.options.registry, audience);
  }

  async sendMessage(
    params: SendMessageRequest,
    context: ServerCallContext,
    next: () => Promise<Message | Task>,
  ): Promise<Message | Task> {
    const command = this.recognise(params, context);
    if (!command) return next();
    const outcome = await this.run(params, command, context);
    if (outcome.followUp) void drain(outcome.followUp()).catch(this.streamError);
    const task = { ...outcome.task, status: outcome.reply.status };
    return applyHistoryLength(task, params.configuration?.historyLength);
  }

  /**
   * Not `async *`: `next` is called at once, as the steps below expect. A turn's stream ends for
   * its client as soon as the client goes away; the turn goes on.
   */
  sendMessageStream(params: SendMessageRequest, context: ServerCallContext, next: () => Stream): Stream {
    const command = this.recognise(params, context);
    if (!command) return detachedOnClientGone(next(), clientGoneSignal(context), this.streamError);
    return this.streamCommand(params, command, context);
  }

  private readonly streamError = (error: unknown) => this.options.onStreamError?.(error);

  /** The command a message is for its caller: one offered to signed-in callers only is none to anyone else. */
  private recognise(params: SendMessageRequest, context: ServerCallContext) {
    const message = params.message;
    if (!message) return undefined;
    if (!message.messageId) throw new RequestMalformedError('message.messageId is required.');
    const signedIn = context.user?.isAuthenticated === true;
    return parseCommand(message, (name) => this.options.registry.offers(name, signedIn));
  }

  /** Runs the command, with what stores the message's push-notification config and the config itself. */
  private async run(params: SendMessageRequest, command: { name: string; args: string }, context: ServerCallContext) {
    const pushConfig = params.configuration?.taskPushNotificationConfig ?? undefined;
    return this.runner.run(params.message!, command, context, await this.pushFor(params, context), pushConfig);
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
  ): Stream {
    const outcome = await this.run(params, command, context);
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
