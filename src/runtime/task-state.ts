import type { Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * State the harness owns about a task, kept apart from the task JSON that the SDK rewrites
 * on every event (a write there from outside a turn can be overwritten by the turn's next
 * save). Implemented durably by `store/`; `runtime/` and the built-in commands read it here.
 */
export interface TokenUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export interface TaskStateStore {
  /** The model chosen for this task with `/model`, if any. */
  getTaskModel(taskId: string): Promise<string | undefined>;
  /**
   * Stores the task's model and, when `contextId` is given, remembers it as the context's
   * latest choice (CMD-21, CMD-22). A sub-task inherits a model without it being "chosen".
   */
  setTaskModel(taskId: string, contextId: string | undefined, model: string): Promise<void>;
  /** The model last chosen in this context, for new tasks in it (CMD-22). */
  getContextModel(contextId: string): Promise<string | undefined>;
  /** Adds one model call's token counts to the task's running totals for that model. */
  addUsage(taskId: string, usage: TokenUsage): Promise<void>;
  /** The task's token totals, one entry per model used, in first-use order. */
  getUsage(taskId: string): Promise<TokenUsage[]>;
  /** The task's parent, if it is a sub-task, and its sub-tasks in start order. */
  getLinks(taskId: string): Promise<TaskLinks>;
}

export interface TaskLinks {
  parent?: string;
  children: string[];
}

/**
 * Where a new sub-task is stored. The task (SUBMITTED), its link to its parent (CMD-30) and
 * its model are written in one transaction: a failure leaves none of them, never a linked
 * task that no turn will run.
 */
export interface SubtaskRecords {
  createSubtask(subtask: Task, parentId: string, model: string, context: ServerCallContext): Promise<void>;
}
