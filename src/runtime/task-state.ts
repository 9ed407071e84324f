import type { Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * State the harness owns about a task, kept apart from the task JSON that the SDK rewrites
 * on every event (a write there from outside a turn can be overwritten by the turn's next
 * save). Implemented durably by `store/`; `runtime/` and the built-in commands read it here.
 *
 * Everything here belongs to one user, as tasks do. State kept by task id is reached only
 * through a task its caller may see (task ids are the server's UUIDs, never a client's
 * choice). Context ids are a client's choice, so two users may name the same context: state
 * kept by context carries its user (`ContextKey`).
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
   * Stores the task's model and, when `context` is given, remembers it as that user's latest
   * choice in the context (CMD-21, CMD-22, CMD-35). A sub-task inherits a model without it
   * being "chosen".
   */
  setTaskModel(taskId: string, context: ContextKey | undefined, model: string): Promise<void>;
  /** The model this user last chose in this context, for their new tasks in it (CMD-22, CMD-35). */
  getContextModel(context: ContextKey): Promise<string | undefined>;
  /** The task's own model choice, else the user's latest in `context` (when given): one read for both. */
  getModelChoice(taskId: string, context: ContextKey | undefined): Promise<string | undefined>;
  /** Adds one model call's token counts to the task's running totals for that model. */
  addUsage(taskId: string, usage: TokenUsage): Promise<void>;
  /** The task's token totals, one entry per model used, in first-use order. */
  getUsage(taskId: string): Promise<TokenUsage[]>;
  /** The counts of the task's last `addUsage` alone (its last turn's), if it has any. */
  getLastUsage(taskId: string): Promise<TokenUsage | undefined>;
  /** The task's parent, if it is a sub-task, and its sub-tasks in start order. */
  getLinks(taskId: string): Promise<TaskLinks>;
}

/** A context as one user sees it: the tenant and owner tasks are stored under, and the context id. */
export interface ContextKey {
  tenant: string;
  owner: string;
  contextId: string;
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

/** Where a fork is stored (CMD-37): the task and its model in one transaction, so a fork never runs another model. */
export interface ForkRecords {
  createFork(fork: Task, model: string, context: ServerCallContext): Promise<void>;
}

/** A tool one user allowed for good in one conversation with `/approve always` (TOOL-5). */
export interface ToolGrant {
  tool: string;
  /** When it was allowed, ISO 8601. */
  grantedAt: string;
}

/**
 * The tools each user allowed in each conversation (context): their calls there run without
 * asking, on any instance, after any restart, until revoked with `/permissions revoke` (TOOL-5).
 * Contexts are named by clients, so grants are kept per user (`ContextKey`).
 */
export interface ToolGrants {
  /** Allows the tools in the context; allowing one again changes nothing. */
  grant(context: ContextKey, tools: readonly string[]): Promise<void>;
  /** The tools allowed in the context, by name. */
  list(context: ContextKey): Promise<ToolGrant[]>;
  /** Takes a tool's grant back: false when it had none. */
  revoke(context: ContextKey, tool: string): Promise<boolean>;
}
