import type { Message, StreamResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { AgentRun } from './agent-run.js';

export interface SubtaskOptions {
  /** The call that asked for the sub-task: the sub-task belongs to the same user and tenant. */
  callContext: ServerCallContext;
  /** `provider:model` to run on; default: the parent's model. Must be offered. */
  model?: string;
  /** A short label for logs and notes, e.g. the command that started it. */
  label?: string;
  /** The only tools the sub-task may call (`allowed-tools`, TOOL-3); all of them when absent. */
  allowedTools?: string[];
  /** `none`: the sub-task is sent only its instruction, not the parent's conversation. */
  context?: 'none';
  /**
   * The agent the sub-task runs as (the `delegate` tool, docs/agents.md): kept in its metadata
   * (`AGENT_KEY`), and its start is noted in the parent, as its end is.
   */
  agent?: AgentRun;
}

/**
 * Starts sub-tasks: a new A2A task in the parent's context whose one model turn works on an
 * instruction. `start` returns as soon as the sub-task is stored and its turn has begun; it
 * does not wait for the turn (a command replies at once with the sub-task's id, CMD-30).
 */
export interface SubtaskStarter {
  /** Starts a sub-task of `parent`; returns its id. Throws `HarnessError('model_unknown')` for a model not offered. */
  start(parent: Task, instruction: string, options: SubtaskOptions): Promise<string>;
}

/** How a command's prompt runs inline (CMD-38): what it is, and the file's grants for its turn. */
export interface CommandTurnOptions {
  callContext: ServerCallContext;
  /** The command as typed without its arguments (`/review`): marks the turn's message as the command's. */
  label: string;
  /** `provider:model` (or a model name alone) the turn runs on; default: the task's model. Must be offered. */
  model?: string;
  /** The only tools the turn may call (`allowed-tools`, TOOL-3); all of them when absent. */
  allowedTools?: string[];
  /** The command message: its `tiny-harness/while-busy` says what happens while a turn runs on the task. */
  message: Message;
}

/**
 * What a command's inline turn comes to, decided when the command is answered: `busy`, a turn
 * runs on the task and the command message does not ask to queue (nothing will start); else
 * `run` starts the turn once the reply is stored (`CommandResult.followUp`), or queues it
 * behind the running turn (`queued`), and yields its events.
 */
export type CommandTurn =
  { kind: 'busy' } | { kind: 'start' | 'queued'; run: () => AsyncGenerator<StreamResponse, void, undefined> };

/** Runs a command's prompt as a turn on the task it was sent to (CMD-38), as its own message. */
export interface CommandTurnStarter {
  /** Throws `CommandUsageError` for a model not offered or a `while-busy` value not known. */
  prepare(task: Task, prompt: string, options: CommandTurnOptions): Promise<CommandTurn>;
}

/** What starts what a command file or a skill asks for: a sub-task (`context: fork`), or a turn inline. */
export type CommandStarter = SubtaskStarter & CommandTurnStarter;
