import { TaskState, type ListTasksRequest, type ListTasksResponse, type Message, type Task } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { resolveUserScope, type OwnerResolver, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import type { Kysely } from 'kysely';
import { HarnessError } from '../errors.js';
import type { Database } from './database.js';
import { IN_FLIGHT_STATES, interruptedTurnMessage, type InterruptedTask } from './interrupted.js';
import { applyPlan, writePlan } from './plan-writes.js';
import { isEmptyPlan, planSave } from './save-plan.js';
import { copyTask, type StoredTask } from './stored-task.js';
import { KeyedLock, TaskCache } from './task-cache.js';
import { queryTaskPage } from './task-list.js';
import { readStoredTask, readStoredTasks } from './task-rows.js';

/** Who may see a task: the SDK's tenant and owner, as `InMemoryTaskStore` scopes them. */
export interface TaskScope {
  tenant: string;
  owner: string;
}

export interface SqlTaskStoreOptions {
  /** Tasks kept in memory (least recently used dropped first). Default 500; 0 turns caching off. */
  cacheSize?: number;
  /** Owner of a call; defaults to the SDK's `resolveUserScope` (user name, or "unknown"). */
  ownerResolver?: OwnerResolver;
  /** The clock for row timestamps and recovery statuses; tests may pin it. */
  now?: () => Date;
}

export const DEFAULT_TASK_CACHE_SIZE = 500;

/**
 * The SDK's `TaskStore` over SQL, built for the result manager's habit of loading and saving
 * the whole task after every event: a load is served from a cache of task images and a save
 * writes only what the event changed (see `save-plan.ts`), so an event on a task with
 * thousands of messages costs about what it costs on a new task. Tasks are scoped by tenant
 * and owner like the SDK's stores; one process is assumed to own the database file.
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
    this.cache = new TaskCache(options.cacheSize ?? DEFAULT_TASK_CACHE_SIZE);
    this.ownerResolver = options.ownerResolver ?? resolveUserScope;
    this.now = options.now ?? (() => new Date());
  }

  /** A copy of the task the caller may change freely, or undefined if not stored in its scope. */
  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const image = await this.image(taskId);
    return image && this.inScope(image, this.scopeOf(context)) ? copyTask(image.task) : undefined;
  }

  /** Writes what changed since the stored task, in one transaction (see `save-plan.ts`). */
  async save(task: Task, context: ServerCallContext): Promise<void> {
    const scope = this.scopeOf(context);
    await this.locks.run(task.id, () => this.saveLocked(task, scope));
  }

  /** `ListTasks` in SQL: filters, order and paging of `InMemoryTaskStore.list`. */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const page = await queryTaskPage(this.db, this.scopeOf(context), params);
    const includeArtifacts = params.includeArtifacts ?? false;
    const missing = page.ids.filter((id) => !this.cache.peek(id));
    const read = await readStoredTasks(this.db, missing, { withArtifacts: includeArtifacts });
    const tasks: Task[] = [];
    for (const id of page.ids) {
      const image = this.cache.peek(id) ?? read.get(id);
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
    const image = await this.image(taskId);
    return image ? copyTask(image.task) : undefined;
  }

  /** The tenant and owner a task is stored under, to act on it later without a call context. */
  async scopeOfTask(taskId: string): Promise<TaskScope | undefined> {
    const image = await this.image(taskId);
    return image ? { tenant: image.tenant, owner: image.owner } : undefined;
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
   * Appends one message to a task's history and changes nothing else (status, metadata and
   * artifacts stay as stored). A message whose id is already stored is left as it is. For
   * messages the harness keeps outside the SDK's event flow, e.g. a command message.
   */
  async appendMessage(taskId: string, message: Message, context: ServerCallContext): Promise<void> {
    const scope = this.scopeOf(context);
    await this.locks.run(taskId, async () => {
      const image = await this.imageLocked(taskId);
      if (!image || !this.inScope(image, scope)) throw new TaskNotFoundError(`Task not found: ${taskId}`);
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
      await this.locks.run(interrupted.id, async () => {
        const image = await this.imageLocked(interrupted.id);
        const state = image?.task.status?.state;
        if (!image || state === undefined || !IN_FLIGHT_STATES.includes(state)) return;
        const message = build(interrupted);
        const task = copyTask(image.task);
        task.status = { state: stateOf(interrupted), message, timestamp: this.now().toISOString() };
        task.history.push(message);
        await this.saveLocked(task, { tenant: image.tenant, owner: image.owner });
        recovered++;
      });
    }
    return recovered;
  }

  /** Forgets every cached image (the next use reads rows again); for tests and benchmarks. */
  clearCache(): void {
    this.cache.clear();
  }

  private scopeOf(context: ServerCallContext): TaskScope {
    return { tenant: context.tenant ?? '', owner: this.ownerResolver(context) };
  }

  private inScope(image: StoredTask, scope: TaskScope): boolean {
    return image.tenant === scope.tenant && image.owner === scope.owner;
  }

  /** The image from the cache, or read under the task's lock so no save can outdate it. */
  private async image(taskId: string): Promise<StoredTask | undefined> {
    return this.cache.get(taskId) ?? this.locks.run(taskId, () => this.imageLocked(taskId));
  }

  /** Same as `image`, for callers already holding the task's lock. */
  private async imageLocked(taskId: string): Promise<StoredTask | undefined> {
    const cached = this.cache.get(taskId);
    if (cached) return cached;
    const stored = await readStoredTask(this.db, taskId);
    if (stored) this.cache.set(taskId, stored);
    return stored;
  }

  private async saveLocked(task: Task, scope: TaskScope): Promise<void> {
    const stored = await this.imageLocked(task.id);
    if (stored && !this.inScope(stored, scope)) {
      throw new HarnessError('store_failed', `Task ${task.id} is stored for another tenant or owner; it was not saved.`);
    }
    const plan = planSave(stored, task);
    if (isEmptyPlan(plan)) return;
    const identity = { id: task.id, contextId: stored?.task.contextId ?? task.contextId, ...scope };
    const now = this.now().toISOString();
    try {
      await this.db.transaction().execute((trx) => writePlan(trx, identity, plan, now));
      this.cache.set(task.id, applyPlan(stored, identity, plan, now));
    } catch (error) {
      this.cache.delete(task.id);
      throw new HarnessError('store_failed', `Task ${task.id} could not be saved.`, { cause: error });
    }
  }
}
