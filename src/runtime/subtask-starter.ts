import type { Task } from '@a2a-js/sdk';
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
