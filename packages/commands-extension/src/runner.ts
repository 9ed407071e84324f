import { randomUUID } from 'node:crypto';
import {
  TaskState,
  type Message,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
  type TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { CommandUsageError, type CommandResult } from './command.js';
import { COMMAND_KEY, REPLY_ERROR_KEY } from './wire.js';
import type { ParsedCommand } from './parse.js';
import type { CommandRegistry } from './registry.js';
import type { MessageClaims } from './message-claims.js';
import type { ClaimKey, ClaimOutcome } from './message-claim-store.js';
import type { CommandTaskPort } from './port.js';
import { buildReply } from './reply.js';
import { isTerminal } from './wire.js';

/** What `CommandRunner` needs: the commands, the port, a way to read a task, and optional claims and hooks. */
export interface CommandRunnerOptions {
  registry: CommandRegistry;
  /** Where replies are posted and busy tasks are told apart. */
  port: CommandTaskPort;
  /** Reads a task as the caller may see it; throws the protocol's task-not-found error when it cannot. */
  getTask: (taskId: string, context: ServerCallContext) => Promise<Task>;
  /**
   * Makes messages idempotent by id, per user (CMD-13, CMD-34): a resent command is answered with
   * its first reply instead of run again. Without it, a resent command runs again.
   */
  claims?: MessageClaims;
  /** Told about a handler that failed unexpectedly; the user gets a generic reply (CMD-12). */
  onHandlerError?: (error: unknown, command: string) => void;
  /**
   * Runs around each handler call (and what it starts inside it, such as a sub-task): the
   * harness traces each command there. Default: the handler alone.
   */
  aroundHandler?: (command: string, task: Task, run: () => Promise<CommandResult>) => Promise<CommandResult>;
}

/** One command run: the task before and after its reply, the reply, and what it started. */
export interface CommandOutcome {
  /** The task with the command message, before the reply. */
  taskBefore: Task;
  /** The task as stored after the reply. */
  task: Task;
  /** The reply status update, as published to every listener of the task. */
  reply: TaskStatusUpdateEvent;
  /** What the command started once its reply was stored (`CommandResult.followUp`); a resend starts nothing. */
  followUp?: () => AsyncGenerator<StreamResponse, void, undefined>;
}

/**
 * Runs one command message: finds or creates its task, runs the handler, and posts the
 * command with its reply on the task (the port stores them and sends the reply to every open
 * stream). With `claims`, a message id is run once
 * (CMD-13), concurrent resends included: they get the first reply.
 */
export class CommandRunner {
  constructor(private readonly options: CommandRunnerOptions) {}

  /**
   * `beforeWrite`, when given, runs with the command's task id before the command writes
   * anything to it (a new task's creation included): what the message carries for its task
   * (a push-notification config) is stored there first. A resend writes nothing and runs it not.
   * `pushConfig`: that config as the message carried it, given to the handler.
   */
  async run(
    message: Message,
    command: ParsedCommand,
    context: ServerCallContext,
    beforeWrite?: (taskId: string) => Promise<void>,
    pushConfig?: TaskPushNotificationConfig,
  ): Promise<CommandOutcome> {
    const call = { command, context, pushConfig };
    // A port that records claims keeps them with the tasks: the task is read while the message
    // is claimed, which one database can answer in one statement. Used only once the claim is new.
    const early =
      message.taskId && this.options.claims && this.options.port.recordsClaims
        ? settled(this.options.getTask(message.taskId, context))
        : undefined;
    const claim = await this.options.claims?.claim(message, context);
    if (claim?.kind === 'repeat') return this.answerAgain(claim.outcome, context);
    // A port that records the claim with its reply is given it: the write accepts it.
    const recorded = claim && this.options.port.recordsClaims ? claim.key : undefined;
    try {
      const outcome = message.taskId
        ? await this.runOnTask(message, call, recorded, beforeWrite, early)
        : await this.runOnNewTask(message, call, recorded, beforeWrite);
      await claim?.accept({ taskId: outcome.task.id, reply: outcome.reply }, recorded && 'recorded');
      return outcome;
    } catch (error) {
      await claim?.release();
      throw error;
    } finally {
      claim?.finish();
    }
  }

  /**
   * A resent command: its task as it stands now, with its first reply. An id first sent as an
   * ordinary message (a command added since) has no reply: the task's own status stands for it.
   */
  private async answerAgain(outcome: ClaimOutcome, context: ServerCallContext): Promise<CommandOutcome> {
    const task = await this.options.getTask(outcome.taskId, context);
    const reply = outcome.reply ?? { taskId: task.id, contextId: task.contextId, status: task.status, metadata: {} };
    return { taskBefore: task, task, reply };
  }

  /** CMD-10: a command without a task starts one, waiting for input, in the given or a new context. */
  private async runOnNewTask(
    message: Message,
    call: Call,
    claim: ClaimKey | undefined,
    beforeWrite?: (taskId: string) => Promise<void>,
  ): Promise<CommandOutcome> {
    const { command, context } = call;
    const taskId = randomUUID();
    const contextId = message.contextId || randomUUID();
    const stored = { ...message, taskId, contextId, metadata: { ...message.metadata, [COMMAND_KEY]: command.name } };
    const task: Task = {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [stored],
      metadata: {},
    };
    await beforeWrite?.(taskId);
    // Stored before the handler runs: what it starts (a sub-task) may refer to the task at once.
    await this.options.port.create(task, context);
    return this.answer(task, stored, call, claim);
  }

  private async runOnTask(
    message: Message,
    call: Call,
    claim: ClaimKey | undefined,
    beforeWrite?: (taskId: string) => Promise<void>,
    early?: Promise<Settled<Task>>,
  ): Promise<CommandOutcome> {
    const { command, context } = call;
    const taskId = message.taskId;
    const task = early ? unwrap(await early) : await this.options.getTask(taskId, context);
    if (message.contextId && message.contextId !== task.contextId) {
      throw new RequestMalformedError(
        `contextId mismatch: message contextId '${message.contextId}' does not match task '${taskId}' contextId '${task.contextId}'`,
      );
    }
    // CMD-11: a finished task takes no more messages, commands included.
    if (isTerminal(task.status?.state)) {
      throw new UnsupportedOperationError(`Task ${taskId} is in a terminal state and cannot be modified.`);
    }
    await beforeWrite?.(taskId);
    const stored = {
      ...message,
      contextId: task.contextId,
      metadata: { ...message.metadata, [COMMAND_KEY]: command.name },
    };
    task.history = [...task.history, stored];
    return this.answer(task, stored, call, claim);
  }

  private async answer(task: Task, message: Message, call: Call, claim: ClaimKey | undefined): Promise<CommandOutcome> {
    const { command, context } = call;
    const decide = async (seen: Task) => {
      const invoke = () => this.invoke(seen, message, call);
      const { aroundHandler } = this.options;
      const result = await (aroundHandler ? aroundHandler(command.name, seen, invoke) : invoke());
      const reply = buildReply(seen, seen.status?.state ?? TaskState.TASK_STATE_INPUT_REQUIRED, command.name, result);
      return { result, reply };
    };
    if (!this.options.registry.get(command.name)?.decidesUnderLock) {
      const { result, reply } = await decide(task);
      if (!result.recheck) {
        const after = await this.options.port.post(reply, context, { message, records: result.records, claim });
        return { taskBefore: task, task: after, reply, followUp: result.followUp };
      }
      // Worked on the task as read: stored only if the task has not moved on, else the recheck's answer instead.
      let sent = { result, reply };
      const after = await this.options.port.post(
        {
          taskId: task.id,
          // Decided afresh on each run (`DecidedUpdate`): an earlier run's recheck must not stick.
          decide: async (stored) => {
            const instead = result.recheck!(stored);
            const state = stored.status?.state ?? TaskState.TASK_STATE_INPUT_REQUIRED;
            sent = instead
              ? { result: instead, reply: buildReply(stored, state, command.name, instead) }
              : { result, reply };
            return { update: sent.reply, records: sent.result.records };
          },
        },
        context,
        { message, claim },
      );
      return { taskBefore: task, task: after, reply: sent.reply, followUp: sent.result.followUp };
    }
    let decided!: Awaited<ReturnType<typeof decide>>;
    const after = await this.options.port.post(
      {
        taskId: task.id,
        decide: async (stored) => {
          decided = await decide(stored);
          return { update: decided.reply, records: decided.result.records };
        },
      },
      context,
      { message, claim },
    );
    return { taskBefore: task, task: after, reply: decided.reply, followUp: decided.result.followUp };
  }

  /** Runs the handler; whatever it throws becomes a reply that says what went wrong (CMD-12). */
  private async invoke(task: Task, message: Message, call: Call): Promise<CommandResult> {
    const { command, context: callContext, pushConfig } = call;
    const definition = this.options.registry.get(command.name);
    if (!definition)
      return { text: `The command /${command.name} is no longer available. Send /help to see the commands.` };
    try {
      const result = await definition.handler({
        name: command.name,
        args: command.args,
        task,
        message,
        callContext,
        ...(pushConfig && { pushConfig }),
      });
      if (typeof result?.text !== 'string') throw new Error(`command /${command.name} returned no text`);
      return result;
    } catch (error) {
      if (error instanceof CommandUsageError)
        return { text: error.message, data: { [REPLY_ERROR_KEY]: 'command_usage' } };
      this.options.onHandlerError?.(error, command.name);
      return {
        text: `The command /${command.name} failed unexpectedly; nothing was changed. The error was logged on the server. Try again, or send /help to see the commands.`,
        data: { [REPLY_ERROR_KEY]: 'command_failed' },
      };
    }
  }
}

/** One command call: the command, its context, and the push-notification config its message carried. */
interface Call {
  command: ParsedCommand;
  context: ServerCallContext;
  pushConfig?: TaskPushNotificationConfig;
}

/** A promise's outcome, kept without rejecting: read later, or never. */
type Settled<T> = { value: T } | { error: unknown };

function settled<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

function unwrap<T>(outcome: Settled<T>): T {
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}
