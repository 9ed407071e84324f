import { TaskState, type ListTasksRequest, type ListTasksResponse, type Message, type Task } from '@a2a-js/sdk';
import {
  resolveUserScope,
  type AgentExecutionEvent,
  type OwnerResolver,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import type { Kysely, Transaction } from 'kysely';
import { markSeq, seqOf } from '../event-seq.js';
import { HarnessError } from '../errors.js';
import type { Database } from './database.js';
import { IN_FLIGHT_STATES, interruptedTurnMessage, type InterruptedTask } from './interrupted.js';
import { copyTask, isStoredMessage } from './stored-task.js';
import type { TaskScope } from './task-cache.js';
import { TaskImages, type Alongside, type Decide } from './task-images.js';
import { encoded, type TaskEventLog } from './task-event-log.js';
import { queryTaskPage } from './task-list.js';
import { findTaskScope, readStoredTasks } from './task-rows.js';

export type { TaskScope } from './task-cache.js';

export interface SqlTaskStoreOptions {
  /**
   * The most memory, in bytes (estimated), that task images kept in memory may take, least
   * recently used dropped first; a task heavier than this is never kept. Default 60 MiB
   * (`DEFAULT_TASK_CACHE_BYTES`); 0 turns caching off.
   */
  cacheBytes?: number;
  /** Owner of a call; defaults to the SDK's `resolveUserScope` (user name, or "unknown"). */
  ownerResolver?: OwnerResolver;
  /** The clock for row timestamps and recovery statuses; tests may pin it. */
  now?: () => Date;
  /**
   * Other processes write the same database (instances sharing PostgreSQL): kept images are
   * checked against the row's version before use, and every write locks its task's row (see
   * `TaskImages`). Default false: this process alone writes it (SQLite).
   */
  shared?: boolean;
  /**
   * Shared: where the events handed to the other instances are appended, each in the
   * transaction of the write that stores it (see `TaskEventLog`).
   */
  eventLog?: TaskEventLog;
}

/** Which interrupted tasks `listInterrupted` and `recoverInterrupted` take. */
export interface InterruptedOptions {
  /**
   * Only tasks whose row was last written at least this many milliseconds ago, by the writers'
   * clocks: on a shared database another instance may be storing the end of a turn just now.
   */
  unchangedForMs?: number;
  /** Only these tasks, e.g. the turns of an instance that stopped without ending them. */
  taskIds?: readonly string[];
}

/** 60 MiB: with the task state's 4 MiB (`task-state-store.ts`), the store's default 64 MiB. */
export const DEFAULT_TASK_CACHE_BYTES = 60 * 2 ** 20;

/**
 * The SDK's `TaskStore` over SQL, built for the result manager's habit of loading and saving
 * the whole task after every event: a load is served from a cache of task images and a save
 * writes only what the event changed (see `save-plan.ts`), so an event on a task with
 * thousands of messages costs about what it costs on a new task. Tasks are scoped by tenant
 * and owner like the SDK's stores, and every read for a caller is made in the caller's scope
 * (cache key and SQL alike), so another user's task costs what a missing one costs. Images
 * are read and written through `TaskImages`, alone (SQLite) or shared with other instances
 * (PostgreSQL), where each task's row version keeps every instance's images right.
 */
export class SqlTaskStore implements TaskStore {
  private readonly images: TaskImages;
  private readonly ownerResolver: OwnerResolver;
  private readonly now: () => Date;
  private readonly eventLog: TaskEventLog | undefined;
  private readonly shared: boolean;
  private turnEpoch: (taskId: string) => number | undefined = () => undefined;

  constructor(
    private readonly db: Kysely<Database>,
    options: SqlTaskStoreOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.images = new TaskImages(db, {
      cacheBytes: options.cacheBytes ?? DEFAULT_TASK_CACHE_BYTES,
      now: this.now,
      shared: options.shared ?? false,
    });
    this.shared = options.shared ?? false;
    this.ownerResolver = options.ownerResolver ?? resolveUserScope;
    this.eventLog = options.eventLog;
  }

  /**
   * A copy of the task the caller may change freely, or undefined if not stored in its scope.
   * The copy is marked with the seq of the last event handed on that it reflects (`event-seq.ts`).
   */
  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const image = await this.images.read(taskId, this.scopeOf(context));
    return image ? markSeq(copyTask(image.task), image.eventSeq) : undefined;
  }

  /**
   * Shared: where saves learn the epoch of the turn running the task here (the engine's turns):
   * a save of such a task is that turn's write, refused (`turn_fenced`) once another instance
   * took the task over (see `turn-leases.ts`). Alone (SQLite) nothing is asked or checked: no
   * other process writes the store, and a turn's lease goes only when the turn ends.
   */
  fenceTurns(epochOf: (taskId: string) => number | undefined): void {
    this.turnEpoch = epochOf;
  }

  /**
   * Writes what changed since the stored task, in one transaction (see `save-plan.ts`). Shared,
   * the SDK's result manager saves once per event of a turn, in the order published: the event
   * this save stores is handed on in the same transaction (see `TaskEventLog`), and the write is
   * fenced by the turn's epoch (`fenceTurns`).
   */
  async save(task: Task, context: ServerCallContext): Promise<void> {
    const scope = this.scopeOf(context);
    const event = this.eventLog?.takeNext(task.id);
    // An event another instance stored, passing through a turn here: the result manager saves
    // it again, though the task as just read holds it. Nothing to write, and no row to lock.
    if (this.eventLog && !event && this.images.keptUnchanged(task.id, scope, task)) return;
    const handOn = event && ((trx: Transaction<Database>) => this.eventLog!.append(trx, task.id, [event]));
    const fence = this.shared ? this.turnEpoch(task.id) : undefined;
    await this.images.write(task.id, scope, () => task, handOn, fence);
    if (event) this.eventLog!.committed(task.id, seqOf(event.event));
  }

  /**
   * Stores a new task and, in the same transaction, whatever `alongside` writes: both or
   * neither. A task id already stored, in any scope, is refused (`store_failed`).
   */
  async create(task: Task, context: ServerCallContext, alongside: Alongside): Promise<void> {
    const scope = this.scopeOf(context);
    const refuseStored: Decide = (stored) => {
      if (stored)
        throw new HarnessError('store_failed', `Task ${task.id} is stored already; a new task needs a new id.`);
      return task;
    };
    await this.images.write(task.id, scope, refuseStored, alongside);
  }

  /**
   * Reads, decides and writes a task as one step: `change` gets a copy of the task as stored
   * now and returns the task to save (it may change the copy and return it), or undefined to
   * save nothing. No other write of the task, from this process or (shared) another instance,
   * comes between the read and the write: the task's lock here, and its row's lock in the
   * database, are held throughout, so keep `change` short. Returns a copy of the task as saved,
   * or undefined when `change` returned undefined. A task not stored in the caller's scope is
   * a `task_not_found` `HarnessError`; an error of `change` is passed on and nothing is saved. Shared, the
   * events `handOn` gives (asked after `change`, so they may say what it decided) are handed to
   * the other instances in the same transaction, each then marked with its seq.
   */
  async modify(
    taskId: string,
    context: ServerCallContext,
    change: (task: Task) => Promise<Task | undefined> | Task | undefined,
    handOn?: () => readonly AgentExecutionEvent[],
  ): Promise<Task | undefined> {
    const scope = this.scopeOf(context);
    const log = this.eventLog;
    let lastSeq: number | undefined;
    const alongside =
      log && handOn
        ? async (trx: Transaction<Database>) => (lastSeq = await log.append(trx, taskId, handOn().map(encoded)))
        : undefined;
    const { image, saved } = await this.images.write(
      taskId,
      scope,
      async (stored) => {
        if (!stored) throw taskNotFound(taskId);
        const changed = await change(copyTask(stored.task));
        if (changed && changed.id !== taskId)
          throw new HarnessError(
            'store_failed',
            `A change of task ${taskId} returned task ${changed.id}; nothing was saved.`,
          );
        return changed;
      },
      alongside,
    );
    log?.committed(taskId, lastSeq);
    return saved && image ? copyTask(image.task) : undefined;
  }

  /**
   * Shared: resolves once every write of the task under way when it was called, on any
   * instance, has committed (it takes the task's row lock, which each holds to its commit).
   */
  async awaitWritesUnderWay(taskId: string): Promise<void> {
    if (!this.eventLog) return;
    await this.db
      .transaction()
      .execute((trx) => trx.selectFrom('tasks').select('id').where('id', '=', taskId).forUpdate().execute());
  }

  /** `ListTasks` in SQL: filters, order and paging of `InMemoryTaskStore.list`. */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const scope = this.scopeOf(context);
    const page = await queryTaskPage(this.db, scope, params);
    const includeArtifacts = params.includeArtifacts ?? false;
    // A kept image of another version than the row's is outdated (shared: another instance wrote).
    const kept = page.ids.map((id, i) => this.images.kept(scope, id, page.versions[i]!));
    const missing = page.ids.filter((_, i) => !kept[i]);
    const read = await readStoredTasks(this.db, missing, { withArtifacts: includeArtifacts, scope });
    const tasks: Task[] = [];
    for (const [i, id] of page.ids.entries()) {
      const image = kept[i] ?? read.get(id);
      if (!image) continue; // deleted between the two queries
      const task = copyTask(image.task);
      if (!includeArtifacts) task.artifacts = [];
      tasks.push(task);
    }
    return { tasks, nextPageToken: page.nextPageToken, pageSize: page.pageSize, totalSize: page.totalSize };
  }

  /**
   * The task whoever owns it. For the harness's own paths that have no call context (the
   * executor's `cancelTask`, recovery); never for answering a caller.
   */
  async loadUnscoped(taskId: string): Promise<Task | undefined> {
    const scope = await findTaskScope(this.db, taskId);
    const image = scope && (await this.images.read(taskId, scope));
    return image ? copyTask(image.task) : undefined;
  }

  /** The tenant and owner a task is stored under, to act on it later without a call context. */
  async scopeOfTask(taskId: string): Promise<TaskScope | undefined> {
    const scope = await findTaskScope(this.db, taskId);
    return scope && { tenant: scope.tenant, owner: scope.owner };
  }

  /** Tasks left SUBMITTED or WORKING (turns in flight when their process stopped), oldest first. */
  async listInterrupted(options: InterruptedOptions = {}): Promise<InterruptedTask[]> {
    return (await this.interruptedRows(options)).map((row) => row.task);
  }

  /**
   * Appends one message to a task's history and changes nothing else (status, metadata and
   * artifacts stay as stored). A message stored already (its id and content) is not added. For
   * messages the harness keeps outside the SDK's event flow, e.g. a command message.
   */
  async appendMessage(taskId: string, message: Message, context: ServerCallContext): Promise<void> {
    const scope = this.scopeOf(context);
    await this.images.write(taskId, scope, (stored) => {
      if (!stored) throw taskNotFound(taskId);
      if (isStoredMessage(stored, message)) return undefined;
      const task = copyTask(stored.task);
      task.history.push(message);
      return task;
    });
  }

  /**
   * Moves interrupted tasks (`listInterrupted`, with the same options) to INPUT_REQUIRED, or
   * the state `stateOf` gives, with an agent message as their status message, appended to their
   * history. `makeMessage` is either the message's text or a function building the whole
   * message. Each task is checked again under its lock (and, shared, its row's lock): one that
   * is no longer in flight, or was written since it was listed (its writer is alive and decides
   * what comes next), is left alone. Call at start-up, before serving, and (shared) for the
   * turns of an instance that stopped without ending them. Returns how many tasks it moved.
   */
  async recoverInterrupted(
    makeMessage: string | ((task: InterruptedTask) => Message),
    stateOf: (task: InterruptedTask) => TaskState = () => TaskState.TASK_STATE_INPUT_REQUIRED,
    options: InterruptedOptions = {},
  ): Promise<number> {
    const build =
      typeof makeMessage === 'string'
        ? (task: InterruptedTask) => interruptedTurnMessage(task, makeMessage)
        : makeMessage;
    let recovered = 0;
    for (const { task: interrupted, version } of await this.interruptedRows(options)) {
      const scope = { tenant: interrupted.tenant, owner: interrupted.owner };
      const { saved } = await this.images.write(interrupted.id, scope, (stored) => {
        const state = stored?.task.status?.state;
        if (!stored || stored.version !== version || state === undefined || !IN_FLIGHT_STATES.includes(state))
          return undefined;
        const message = build(interrupted);
        const task = copyTask(stored.task);
        task.status = { state: stateOf(interrupted), message, timestamp: this.now().toISOString() };
        task.history.push(message);
        return task;
      });
      if (saved) recovered++;
    }
    return recovered;
  }

  /** Forgets every cached image (the next use reads rows again); for tests and benchmarks. */
  clearCache(): void {
    this.images.clear();
  }

  /** How many task images are kept in memory and what they weigh; for tests and benchmarks. */
  cacheUsage(): { tasks: number; bytes: number; maxBytes: number } {
    return this.images.usage();
  }

  private scopeOf(context: ServerCallContext): TaskScope {
    return { tenant: context.tenant ?? '', owner: this.ownerResolver(context) };
  }

  /** Interrupted tasks with the row version they were listed at. */
  private async interruptedRows(
    options: InterruptedOptions,
  ): Promise<Array<{ task: InterruptedTask; version: number }>> {
    const { unchangedForMs, taskIds } = options;
    if (unchangedForMs !== undefined && !(unchangedForMs >= 0))
      throw new RangeError(`unchangedForMs must be a number of milliseconds >= 0, not ${unchangedForMs}`);
    if (taskIds?.length === 0) return [];
    let query = this.db
      .selectFrom('tasks')
      .select(['id', 'context_id', 'tenant', 'owner', 'state', 'version'])
      .where('state', 'in', [...IN_FLIGHT_STATES]);
    if (unchangedForMs !== undefined)
      query = query.where('updated_at', '<=', new Date(this.now().getTime() - unchangedForMs).toISOString());
    if (taskIds) query = query.where('id', 'in', [...taskIds]);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => ({
      task: {
        id: row.id,
        contextId: row.context_id,
        tenant: row.tenant,
        owner: row.owner,
        state: row.state as TaskState,
      },
      version: row.version,
    }));
  }
}

function taskNotFound(taskId: string): HarnessError {
  return new HarnessError('task_not_found', `Task not found: ${taskId}`);
}
