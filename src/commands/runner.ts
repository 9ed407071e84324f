import { randomUUID } from 'node:crypto';
import { TaskState, type Message, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import {
  AgentEvent,
  ResultManager,
  type ExecutionEventBusManager,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { CommandUsageError, type CommandResult } from './command.js';
import { COMMAND_KEY } from './extension.js';
import type { ParsedCommand } from './parse.js';
import type { CommandRegistry } from './registry.js';
import type { CommandReplyLog } from './reply-log.js';
import { buildReply } from './reply.js';
import { isTerminal } from './task-states.js';

/** Which tasks have a model turn in flight; implemented by whatever runs the turns. */
export interface ActiveTurns {
  isActive(taskId: string): boolean;
}

/** Appends one message to a task's history without touching anything else of the task. */
export interface HistoryAppender {
  appendMessage(taskId: string, message: Message, context: ServerCallContext): Promise<void>;
}

export interface CommandRunnerOptions {
  registry: CommandRegistry;
  taskStore: TaskStore;
  eventBusManager: ExecutionEventBusManager;
  /** Remembers replies by message id (CMD-13); without it a resent command runs again. */
  replyLog?: CommandReplyLog;
  /** Lets a reply sent while a turn is starting or running say WORKING (CMD-9). */
  activeTurns?: ActiveTurns;
  /** Keeps the command message in the task's history; without it only the reply is kept. */
  history?: HistoryAppender;
  /** Told about a handler that failed unexpectedly; the user gets a generic reply (CMD-12). */
  onHandlerError?: (error: unknown, command: string) => void;
}

export interface CommandOutcome {
  /** The task as stored after the command message, before the reply. */
  taskBefore: Task;
  /** The task as stored after the reply. */
  task: Task;
  /** The reply status update, as published to every listener of the task. */
  reply: TaskStatusUpdateEvent;
}

/**
 * Runs one command message: finds or creates its task, runs the handler, stores the reply
 * and publishes it on the task's live bus, if any. Replies to the same message are computed
 * once (CMD-13), concurrent resends included.
 */
export class CommandRunner {
  private readonly inFlight = new Map<string, Promise<CommandOutcome>>();

  constructor(private readonly options: CommandRunnerOptions) {}

  async run(message: Message, command: ParsedCommand, context: ServerCallContext): Promise<CommandOutcome> {
    if (!message.taskId) return this.runOnNewTask(message, command, context);
    const key = `${message.taskId}\0${message.messageId}`;
    const running = this.inFlight.get(key);
    if (running) return running;
    const outcome = this.runOnTask(message, command, context);
    this.inFlight.set(key, outcome);
    try {
      return await outcome;
    } finally {
      this.inFlight.delete(key);
    }
  }

  /** CMD-10: a command without a task starts one, waiting for input, in the given or a new context. */
  private async runOnNewTask(message: Message, command: ParsedCommand, context: ServerCallContext): Promise<CommandOutcome> {
    const taskId = randomUUID();
    const contextId = message.contextId || randomUUID();
    const stored = { ...message, taskId, contextId, metadata: { ...message.metadata, [COMMAND_KEY]: command.name } };
    const task: Task = {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: this.options.history ? [stored] : [],
      metadata: {},
    };
    await this.options.taskStore.save(task, context);
    return this.answer(task, stored, command, context);
  }

  private async runOnTask(message: Message, command: ParsedCommand, context: ServerCallContext): Promise<CommandOutcome> {
    const taskId = message.taskId;
    const task = await this.options.taskStore.load(taskId, context);
    if (!task) throw new TaskNotFoundError(`Task not found: ${taskId}`);
    if (message.contextId && message.contextId !== task.contextId) {
      throw new RequestMalformedError(`contextId mismatch: message contextId '${message.contextId}' does not match task '${taskId}' contextId '${task.contextId}'`);
    }
    const earlier = await this.options.replyLog?.get(taskId, message.messageId);
    if (earlier) return { taskBefore: task, task, reply: earlier };
    // CMD-11: a finished task takes no more messages, commands included.
    if (isTerminal(task.status?.state)) {
      throw new UnsupportedOperationError(`Task ${taskId} is in a terminal state and cannot be modified.`);
    }
    const stored = { ...message, contextId: task.contextId, metadata: { ...message.metadata, [COMMAND_KEY]: command.name } };
    if (this.options.history) {
      await this.options.history.appendMessage(taskId, stored, context);
      task.history = [...task.history, stored];
    }
    return this.answer(task, stored, command, context);
  }

  private async answer(task: Task, message: Message, command: ParsedCommand, context: ServerCallContext): Promise<CommandOutcome> {
    const result = await this.invoke(task, message, command, context);
    const reply = buildReply(task, task.status?.state ?? TaskState.TASK_STATE_INPUT_REQUIRED, command.name, result);
    await this.persist(reply, context);
    await this.options.replyLog?.put(task.id, message.messageId, reply);
    this.options.eventBusManager.getByTaskId(task.id, context)?.publish(AgentEvent.statusUpdate(reply));
    const after = (await this.options.taskStore.load(task.id, context)) ?? task;
    return { taskBefore: task, task: after, reply };
  }

  /** Runs the handler; whatever it throws becomes a reply that says what went wrong (CMD-12). */
  private async invoke(task: Task, message: Message, command: ParsedCommand, callContext: ServerCallContext): Promise<CommandResult> {
    const definition = this.options.registry.get(command.name);
    if (!definition) return { text: `The command /${command.name} is no longer available. Send /help to see the commands.` };
    try {
      const result = await definition.handler({ name: command.name, args: command.args, task, message, callContext });
      if (typeof result?.text !== 'string') throw new Error(`command /${command.name} returned no text`);
      return result;
    } catch (error) {
      if (error instanceof CommandUsageError) return { text: error.message };
      this.options.onHandlerError?.(error, command.name);
      return { text: `The command /${command.name} failed unexpectedly; nothing was changed. The error was logged on the server. Try again, or send /help to see the commands.` };
    }
  }

  /**
   * Stores the reply through the SDK's result manager, so it takes the same per-task write
   * lock as a running turn's events. The reply's state is read inside that lock, from the
   * stored task, so that it never undoes a state change that landed first (CMD-6, CMD-9).
   */
  private async persist(reply: TaskStatusUpdateEvent, context: ServerCallContext): Promise<void> {
    const { taskStore, activeTurns } = this.options;
    const stateReadingStore: TaskStore = {
      load: async (taskId, loadContext) => {
        const stored = await taskStore.load(taskId, loadContext);
        const state = stored?.status?.state;
        if (reply.status && state !== undefined) {
          reply.status.state = activeTurns?.isActive(taskId) && !isTerminal(state) ? TaskState.TASK_STATE_WORKING : state;
        }
        return stored;
      },
      save: (task, saveContext) => taskStore.save(task, saveContext),
      list: (params, listContext) => taskStore.list(params, listContext),
    };
    await new ResultManager(stateReadingStore, context).processEvent(AgentEvent.statusUpdate(reply));
  }
}
