import type { Message, Task, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';

/**
 * The contracts between the areas that keep tasks and the engine that runs them: what the store
 * (`store/`) and the coordination (`coordination/`) implement, and what the engine (`runtime/`)
 * reads them through. Declared here, below all three, so that none of them imports another's
 * types and dependencies point one way; the composition root (`harness-stages.ts`) joins them.
 */

// ---- Tasks as stored, and their logs

/** A task as read, with its generation: the log after it is what has happened since. */
export interface TaskSnapshot {
  task: Task;
  generation: number;
}

/**
 * What a write does to a task: messages that join its history first (a command message), then
 * the events applied in order (`applyEvent`) and appended to its log.
 */
export interface TaskEdit {
  history?: readonly Message[];
  events: readonly AgentExecutionEvent[];
  /**
   * The claim of the message the edit answers, accepted in the same write, which is refused when
   * the claim is no longer open. Only where the store `recordsClaims`.
   */
  claim?: ClaimAcceptance;
}

/**
 * A message's claim (`message_claims`) accepted by the very write that stores the message's
 * reply: one round trip (on SQLite, one commit) instead of two, and no moment when the reply is
 * stored and the claim still open. Shared by instances on PostgreSQL, the claim must still be
 * open (recorded, not yet accepted) when the write commits, or nothing is written: a message
 * another instance took over is stored once (CMD-34). Alone (SQLite), the write records it.
 */
export interface ClaimAcceptance {
  tenant: string;
  owner: string;
  messageId: string;
  digest: string;
  /** The reply a resend is answered with (a command's), kept as `SqlMessageClaimStore.accept` keeps it. */
  reply: TaskStatusUpdateEvent | undefined;
}

/** What a turn's write tells the store besides its events. */
export interface TurnWrite {
  /**
   * The turn's lease's epoch (shared): the write is refused (`turn_fenced`) once another
   * instance took the task over (see `coordination/turn-leases.ts`).
   */
  fence?: number;
  /**
   * The turn's final write: the last message the turn put in the history (the message it
   * answers, or its newest tool call). The final status's message joins the history right after
   * it, ahead of what was posted while the turn ran (command exchanges, sub-task notes): the
   * reply answers the turn's messages, not those, and streamed in under them.
   */
  replyAfter?: string;
}

/** A write's outcome: the task as stored after it, and the events it logged. */
export interface Appended {
  task: Task;
  logged: LoggedEvent[];
}

/** An event as the task's log holds it (`store/task-log.ts`): its place, and the event. */
export interface LoggedEvent {
  generation: number;
  event: AgentExecutionEvent;
}

/**
 * One reader's events of a task, in generation order, kept until read (`store/task-feeds.ts`).
 * `close` ends it; a reader reading then is told so.
 */
export interface LogSubscription {
  /** Told once when it closes, by whoever keeps a list of open readers (a drain's). */
  onClosed(listener: () => void): void;
  /** The next event, or undefined once closed; after the events waiting, the error it `fail`ed with. */
  next(): Promise<LoggedEvent | undefined>;
  /** Ends the events with `error`, once those waiting are read: what its reader waited for will not come. */
  fail(error: unknown): void;
  close(): void;
}

/** A message waiting in a task's queue (spec/while-busy-extension-v1.md, `store/task-queue.ts`). */
export interface QueuedMessage {
  taskId: string;
  message: Message;
  tenant: string;
  owner: string;
  /** Whether the request that queued it was authenticated (a bearer token). */
  authenticated: boolean;
  createdMs: number;
}

/** What adding a message to a task's queue came to: its place (1 = next), or why it was not added. */
export type Added =
  | { kind: 'added'; position: number }
  /** The message id is queued on the task already: its place, nothing added. */
  | { kind: 'present'; position: number }
  | { kind: 'full'; size: number };

// ---- Push notifications (docs/push.md)

/** A push-notification config as stored. */
export interface StoredPushConfig {
  taskId: string;
  id: string;
  url: string;
  token: string;
  authentication?: { scheme: string; credentials: string };
}

/** The most configs a task may have, and a user (tenant and owner) over all their tasks. */
export interface PushConfigBounds {
  perTask: number;
  perUser: number;
}

/** How `put` ended: stored, no such task of the user's, or a bound reached. */
export type PutOutcome = 'stored' | 'no_task' | 'task_full' | 'user_full';

/** Where a page of a task's configs ended: the last config's creation time and id. */
export interface ConfigCursor {
  createdMs: number;
  id: string;
}

/** Each task's push configs, which belong to the task's user (`store/push-store.ts`). */
export interface PushConfigRecords {
  put(
    scope: TaskOwner,
    config: StoredPushConfig,
    nowMs: number,
    bounds: PushConfigBounds,
    newTask?: boolean,
  ): Promise<PutOutcome>;
  get(scope: TaskOwner, taskId: string, id: string): Promise<StoredPushConfig | undefined>;
  /** A page of the task's configs in the order they were made, from after `page.after`. */
  list(
    scope: TaskOwner,
    taskId: string,
    page: { limit: number; after?: ConfigCursor },
  ): Promise<{ configs: StoredPushConfig[]; next?: ConfigCursor }>;
  delete(scope: TaskOwner, taskId: string, id: string): Promise<void>;
}

/** The user a task is stored under. */
export interface TaskOwner {
  tenant: string;
  owner: string;
}

/** The first pending delivery of a (task, config) pair, and when it is due. */
export interface DueHead {
  taskId: string;
  configId: string;
  generation: number;
  nextAttemptMs: number;
}

/** A delivery to make, with its config. */
export interface PendingDelivery {
  config: StoredPushConfig;
  generation: number;
  eventJson: string;
  attempts: number;
  firstAttemptMs: number | undefined;
}

// ---- The harness's own state of a task

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

// ---- Instances sharing a store

/**
 * What the task engine needs from the instances that share a store, besides the task logs the
 * store keeps (and the wake-ups it sends when one grows): which instance holds a task for its
 * one turn, or a push pair's deliveries, cancel requests carried to the instance running the turn, and turns left behind by
 * an instance that died. One process alone needs none of it to cross a process boundary
 * (`LocalCoordination`); instances sharing PostgreSQL take it from PostgreSQL itself (row
 * leases, `LISTEN/NOTIFY`, heartbeats).
 */
export interface Coordination {
  /** This instance's id: unique among the instances sharing the store, new at every start. */
  readonly instanceId: string;

  /**
   * Takes the task for one turn on this instance: the lease's epoch, greater than every earlier
   * lease's of the task, on any instance; undefined when a turn holds it here or elsewhere, or
   * (`unlessQueued`: a message sent to the task) when messages wait in the task's queue, which
   * go first (spec/while-busy-extension-v1.md). The turn's writes carry the epoch, and the store
   * refuses them once another instance took the task over (`turn_fenced`, see `coordination/turn-leases.ts`).
   */
  acquireTurn(taskId: string, options?: { unlessQueued?: boolean }): Promise<number | undefined>;
  /**
   * Gives the task back; resolves once other instances can see it free, with whether messages
   * wait in the task's queue (for the queue to run the next), undefined when it cannot say.
   */
  releaseTurn(taskId: string): Promise<boolean | undefined>;
  /** Whether a turn holds the task, on any instance. */
  turnHeld(taskId: string): Promise<boolean>;

  /**
   * Takes a (task, config) pair's push deliveries for this instance, so that they go out one at
   * a time and in order: false when an instance (this one included) delivers the pair now. A
   * lease of its own kind, not a turn's: it holds no task. A dead instance's pairs are free
   * again once a survivor took its place.
   */
  acquirePush(taskId: string, configId: string): Promise<boolean>;
  /** Gives the pair back. */
  releasePush(taskId: string, configId: string): Promise<void>;

  /**
   * Asks whichever instance runs the task's turn to end it (this one included): `cancel` ends
   * the task (`CancelTask`), `stop` ends only the turn, keeping what it wrote (`/stop`, CMD-32).
   */
  requestCancel(taskId: string, how?: TurnEnding): Promise<void>;
  /** The handler of cancel and stop requests for turns on this instance; set once, by the engine. */
  onCancelRequest(handler: (taskId: string, how: TurnEnding) => void): void;
  /**
   * Tells the other instances that the task is free while its queue holds messages this
   * instance will not run (it drains): one of them runs the queue's head (`TurnQueue`).
   */
  offerQueue(taskId: string): Promise<void>;
  /** The handler of queues offered by other instances; set once, by the queue. */
  onQueueOffered(handler: (taskId: string) => void): void;
  /**
   * The handler of turns left held by an instance that stopped without ending them (`kill -9`,
   * a lost machine): called on one surviving instance, once per dead instance, after its
   * heartbeat is older than the lease time. The leases are released before the call, so the
   * handler checks each task under its write lock: a task a new turn took meanwhile is not
   * interrupted again. A rejection is reported through `onError`; the tasks are not offered again.
   */
  onOrphanedTurns(handler: (taskIds: string[]) => Promise<void>): void;
  /**
   * How long, in ms, a task in flight with no lease must have been unchanged before start-up
   * recovery takes it for cut short: 0 alone (nobody else can be ending a turn), the lease time
   * when shared (another instance may be between releasing its lease and storing the end).
   */
  readonly settleMs: number;

  /** Sends the wake-ups due, gives back this instance's leases, then stops; nothing may be called afterwards. */
  close(): Promise<void>;
}

/** How a turn asked to end from outside ends: the task canceled, or only the turn stopped. */
export type TurnEnding = 'cancel' | 'stop';
