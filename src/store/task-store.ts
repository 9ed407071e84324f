import { TaskState, type ListTasksRequest, type ListTasksResponse, type Message, type Task } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { resolveUserScope, type OwnerResolver, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import type { Kysely, Transaction } from 'kysely';
import { HarnessError } from '../errors.js';
import type { Database } from './database.js';
import { IN_FLIGHT_STATES, interruptedTurnMessage, type InterruptedTask } from './interrupted.js';
import { applyPlan, writePlan } from './plan-writes.js';
import { isEmptyPlan, planSave } from './save-plan.js';
import { copyTask, type StoredTask } from './stored-task.js';
import { KeyedLock, scopedKey, TaskCache, type TaskScope } from './task-cache.js';
import { queryTaskPage } from './task-list.js';
import { findTaskScope, readStoredTask, readStoredTasks } from './task-rows.js';

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
}

/** 60 MiB: with the task state's 4 MiB (`task-state-store.ts`), the store's default 64 MiB. */
export const DEFAULT_TASK_CACHE_BYTES = 60 * 2 ** 20;

/**
 * The SDK's `TaskStore` over SQL, built for the result manager's habit of loading and saving
 * the whole task after every event: a load is served from a cache of task images and a save
 * writes only what the event changed (see `save-plan.ts`), so an event on a task with
 * thousands of messages costs about what it costs on a new task. Tasks are scoped by tenant
 * and owner like the SDK's stores, and every read for a caller is made in the caller's scope
 * (cache key and SQL alike), so another user's task costs what a missing one costs. One
 * process is assumed to own the database file.
 */
export class SqlTaskStore implements TaskStore {
  private readonly cache: TaskCache;
  private readonly locks = new KeyedLock();
  private readonly ownerResolver: OwnerResolver;
  private readonly now: () => Date;

  constructor(
    private readonly db: Kysely<Database>,
    options: SqlTaskStoreOptions = {},
  ) {
    this.cache = new TaskCache(options.cacheBytes ?? DEFAULT_TASK_CACHE_BYTES);
    this.ownerResolver = options.ownerResolver ?? resolveUserScope;
    this.now = options.now ?? (() => new Date());
  }

  /** A copy of the task the caller may change freely, or undefined if not stored in its scope. */
  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const image = await this.image(taskId, this.scopeOf(context));
    return image ? copyTask(image.task) : undefined;
  }

  /** Writes what changed since the stored task, in one transaction (see `save-plan.ts`). */
  async save(task: Task, context: ServerCallContext): Promise<void> {
    const scope = this.scopeOf(context);
    await this.locks.run(scopedKey(scope, task.id), () => this.saveLocked(task, scope));
  }

  /**
   * Stores a new task and, in the same transaction, whatever `alongside` writes: both or
   * neither. A task id already stored, in any scope, is refused (`store_failed`).
   */
  async create(task: Task, context: ServerCallContext, alongside: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
    const scope = this.scopeOf(context);
    await this.locks.run(scopedKey(scope, task.id), () => this.saveLocked(task, scope, alongside));
  }

  /** `ListTasks` in SQL: filters, order and paging of `InMemoryTaskStore.list`. */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const scope = this.scopeOf(context);
    const page = await queryTaskPage(this.db, scope, params);
    const includeArtifacts = params.includeArtifacts ?? false;
    const missing = page.ids.filter((id) => !this.cache.peek(scope, id));
    const read = await readStoredTasks(this.db, missing, { withArtifacts: includeArtifacts, scope });
    const tasks: Task[] = [];
    for (const id of page.ids) {
      const image = this.cache.peek(scope, id) ?? read.get(id);
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
    const image = scope && (await this.image(taskId, scope));
    return image ? copyTask(image.task) : undefined;
  }

  /** The tenant and owner a task is stored under, to act on it later without a call context. */
  async scopeOfTask(taskId: string): Promise<TaskScope | undefined> {
    const scope = await findTaskScope(this.db, taskId);
    return scope && { tenant: scope.tenant, owner: scope.owner };
  }

  /** Tasks left SUBMITTED or WORKING: turns in flight when the process last stopped. */
  async listInterrupted(): Promise<InterruptedTask[]> {
    const rows = await this.db
      .selectFrom('tasks')
      .select(['id', 'context_id', 'tenant', 'owner', 'state'])
      .where('state', 'in', [...IN_FLIGHT_STATES])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => ({ id: row.id, contextId: row.context_id, tenant: row.tenant, owner: row.owner, state: row.state as TaskState }));
  }

  /**
   * Read, decide and write as one step: `change` gets a copy of the task as stored now, under
   * the task's write lock, and what it returns is saved (nothing when it returns undefined).
   * Resolves with the task as saved, or undefined when the task is not stored in the caller's scope.
   */
  async modify(taskId: string, context: ServerCallContext, change: (task: Task) => Promise<Task | undefined> | Task | undefined): Promise<Task | undefined> {
    const scope = this.scopeOf(context);
    return this.locks.run(scopedKey(scope, taskId), async () => {
      const image = await this.imageLocked(taskId, scope);
      if (!image) return undefined;
      const changed = await change(copyTask(image.task));
      if (!changed) return copyTask(image.task);
      await this.saveLocked(changed, scope);
      return changed;
    });
  }

  /**
   * Appends one message to a task's history and changes nothing else (status, metadata and
   * artifacts stay as stored). A message whose id is already stored is left as it is. For
   * messages the harness keeps outside the SDK's event flow, e.g. a command message.
   */
  async appendMessage(taskId: string, message: Message, context: ServerCallContext): Promise<void> {
    const scope = this.scopeOf(context);
    await this.locks.run(scopedKey(scope, taskId), async () => {
      const image = await this.imageLocked(taskId, scope);
      if (!image) throw new TaskNotFoundError(`Task not found: ${taskId}`);
      if (image.messageIds.has(message.messageId)) return;
      const task = copyTask(image.task);
      task.history.push(message);
      await this.saveLocked(task, scope);
    });
  }

  /**
   * Call once at start-up, before serving: moves every interrupted task to INPUT_REQUIRED with
   * an agent message as its status message, appended to its history. `makeMessage` is either
   * the message's text or a function building the whole message. Returns how many tasks.
   */
  async recoverInterrupted(
    makeMessage: string | ((task: InterruptedTask) => Message),
    stateOf: (task: InterruptedTask) => TaskState = () => TaskState.TASK_STATE_INPUT_REQUIRED,
  ): Promise<number> {
    const build = typeof makeMessage === 'string' ? (task: InterruptedTask) => interruptedTurnMessage(task, makeMessage) : makeMessage;
    let recovered = 0;
    for (const interrupted of await this.listInterrupted()) {
      const scope = { tenant: interrupted.tenant, owner: interrupted.owner };
      await this.locks.run(scopedKey(scope, interrupted.id), async () => {
        const image = await this.imageLocked(interrupted.id, scope);
        const state = image?.task.status?.state;
        if (!image || state === undefined || !IN_FLIGHT_STATES.includes(state)) return;
        const message = build(interrupted);
        const task = copyTask(image.task);
        task.status = { state: stateOf(interrupted), message, timestamp: this.now().toISOString() };
        task.history.push(message);
        await this.saveLocked(task, scope);
        recovered++;
      });
    }
    return recovered;
  }

  /** Forgets every cached image (the next use reads rows again); for tests and benchmarks. */
  clearCache(): void {
    this.cache.clear();
  }

  /** How many task images are kept in memory and what they weigh; for tests and benchmarks. */
  cacheUsage(): { tasks: number; bytes: number; maxBytes: number } {
    return { tasks: this.cache.size, bytes: this.cache.bytes, maxBytes: this.cache.maxBytes };
  }

  private scopeOf(context: ServerCallContext): TaskScope {
    return { tenant: context.tenant ?? '', owner: this.ownerResolver(context) };
  }

  /**
   * The task's image in `scope`, from the cache or read under the task's lock so no save can
   * outdate it; undefined when no task has that id in that scope, stored elsewhere or not.
   */
  private async image(taskId: string, scope: TaskScope): Promise<StoredTask | undefined> {
    return this.cache.get(scope, taskId) ?? this.locks.run(scopedKey(scope, taskId), () => this.imageLocked(taskId, scope));
  }

  /** Same as `image`, for callers already holding the task's lock. */
  private async imageLocked(taskId: string, scope: TaskScope): Promise<StoredTask | undefined> {
    const cached = this.cache.get(scope, taskId);
    if (cached) return cached;
    const stored = await readStoredTask(this.db, taskId, scope);
    if (stored) this.cache.set(stored);
    return stored;
  }

  /** Saves under the task's lock; with `alongside`, only a new task, with those writes in its transaction. */
  private async saveLocked(task: Task, scope: TaskScope, alongside?: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
    const stored = await this.imageLocked(task.id, scope);
    if (alongside && stored) throw new HarnessError('store_failed', `Task ${task.id} is stored already; a new task needs a new id.`);
    const plan = planSave(stored, task);
    if (isEmptyPlan(plan) && !alongside) return;
    const identity = { id: task.id, contextId: stored?.task.contextId ?? task.contextId, ...scope };
    const now = this.now().toISOString();
    try {
      await this.db.transaction().execute(async (trx) => {
        await writePlan(trx, identity, plan, now);
        await alongside?.(trx);
      });
      this.cache.set(applyPlan(stored, identity, plan, now));
    } catch (error) {
      this.cache.delete(scope, task.id);
      // A new task whose id is taken in another scope: its insert failed on the key.
      const owner = plan.isNew ? await findTaskScope(this.db, task.id).catch(() => undefined) : undefined;
      if (owner) throw new HarnessError('store_failed', `Task ${task.id} is stored for another tenant or owner; it was not saved.`, { cause: error });
      throw new HarnessError('store_failed', `Task ${task.id} could not be saved.`, { cause: error });
    }
  }
}
