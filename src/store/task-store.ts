import { TaskState, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk';
import {
  resolveUserScope,
  type AgentExecutionEvent,
  type OwnerResolver,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import type { Kysely } from 'kysely';
import { HarnessError } from '../errors.js';
import type { Database } from './database.js';
import { IN_FLIGHT_STATES, type InterruptedTask } from './interrupted.js';
import { copyTask } from './stored-task.js';
import type { TaskScope } from './task-cache.js';
import type { Alongside, Change, ClaimWriter, Decide } from './task-commit.js';
import { TaskImages } from './task-images.js';
import { applyEvent, isWholeBatch, readLogAfter } from './task-log.js';
import { queryTaskPage } from './task-list.js';
import { findTaskScope, readStoredTasks } from './task-rows.js';
import type { Appended, LoggedEvent, TaskEdit, TaskSnapshot, TurnWrite } from '../ports.js';

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
  /** Told of the events each write logged, in generation order, once committed (`TaskImages`). */
  onLogged?: (taskId: string, logged: readonly LoggedEvent[], pushed: boolean) => void;
  /** False when a write of the task owes no push delivery (`SqlPushStore.mayOwe`). */
  mayOwePush?: (taskId: string) => boolean;
  /**
   * Alone (SQLite): how a write records the claim of the message it answers, already accepted,
   * in its transaction (`SqlMessageClaimStore.recordIn`); given, the store `recordsClaims` and
   * a command's reply and its claim take one commit. Shared, claims are always recorded:
   * `acceptClaimIn` accepts the claim recorded before.
   */
  recordClaim?: ClaimWriter;
}

/** Which interrupted tasks `listInterrupted` lists. */
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
 * Tasks over SQL, each with its ordered event log (`task-log.ts`): every write applies events
 * to the stored task and appends them, in one transaction. A write costs what its events
 * change, not the task's size: it is planned against an image kept in memory (`save-plan.ts`),
 * so an event on a task with thousands of messages costs about what it costs on a new task.
 * Tasks are scoped by tenant and owner like the SDK's stores, and every read for a caller is
 * made in the caller's scope (cache key and SQL alike), so another user's task costs what a
 * missing one costs. Images are read and written through `TaskImages`, alone (SQLite) or shared
 * with other instances (PostgreSQL), where each task's row version keeps every instance's
 * images right.
 */
export class SqlTaskStore {
  private readonly images: TaskImages;
  private readonly ownerResolver: OwnerResolver;
  private readonly now: () => Date;
  /**
   * A write accepts the claim of the message it answers (`TaskEdit.claim`) in `message_claims`:
   * shared (PostgreSQL), where `SqlMessageClaimStore` on the same database recorded it; alone
   * (SQLite), recording it (`recordClaim`).
   */
  readonly recordsClaims: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    options: SqlTaskStoreOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.images = new TaskImages(db, {
      cacheBytes: options.cacheBytes ?? DEFAULT_TASK_CACHE_BYTES,
      now: this.now,
      shared: options.shared ?? false,
      onLogged: options.onLogged,
      mayOwePush: options.mayOwePush,
      acceptClaim: options.shared ? undefined : options.recordClaim,
    });
    this.ownerResolver = options.ownerResolver ?? resolveUserScope;
    this.recordsClaims = (options.shared ?? false) || options.recordClaim !== undefined;
  }

  /** A copy of the task the caller may change freely, or undefined if not stored in its scope. */
  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return (await this.read(taskId, context))?.task;
  }

  /** As `load`, with the task's generation. */
  async read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined> {
    const image = await this.images.read(taskId, this.scopeOf(context));
    return image ? { task: copyTask(image.task), generation: image.generation } : undefined;
  }

  /**
   * Stores a new task, its creation the log's first event, and, in the same transaction,
   * whatever `alongside` writes: both or neither. A task id already stored, in any scope, is
   * refused (`store_failed`).
   */
  async create(task: Task, context: ServerCallContext, alongside?: Alongside): Promise<Appended> {
    const scope = this.scopeOf(context);
    const created: Decide = (stored) => {
      if (stored)
        throw new HarnessError('store_failed', `Task ${task.id} is stored already; a new task needs a new id.`);
      const event: AgentExecutionEvent = { kind: 'task', data: task };
      return { task: applyEvent(undefined, event)!, events: [event] };
    };
    const { image, logged } = await this.images.commit({ taskId: task.id, scope, decide: created, alongside });
    return { task: copyTask(image!.task), logged };
  }

  /**
   * Applies `events` to the task and appends them to its log, in one transaction; `turn` when
   * the write is a turn's (see `TurnWrite`).
   */
  async append(
    taskId: string,
    context: ServerCallContext,
    events: readonly AgentExecutionEvent[],
    turn: TurnWrite = {},
  ): Promise<Appended> {
    const { image, logged } = await this.images.commit({
      taskId,
      scope: this.scopeOf(context),
      decide: (stored) => {
        const change = applied(stored && copyTask(stored.task), events, turn.replyAfter);
        if (!change.task) throw taskNotFound(taskId);
        return change as Change;
      },
      fence: turn.fence,
    });
    return { task: copyTask(image!.task), logged };
  }

  /**
   * Reads, decides and writes a task as one step: `decide` gets a copy of the task as stored
   * now and returns the edit to make, or undefined to make none. No other write of the task,
   * from this process or (shared) another instance, comes between the read and the write: the
   * task's lock here, and its row's lock in the database, are held throughout, so keep `decide`
   * short, and pure (`Decide`): shared, it may run twice for one write, and only its last answer
   * is stored. A message of `history` stored already (its id and content) is not added again.
   * Resolves with the task as stored and the events logged, or undefined when `decide` returned
   * nothing. A task not stored in the caller's scope is a `task_not_found` `HarnessError`; an
   * error of `decide` is passed on and nothing is saved.
   */
  async modify(
    taskId: string,
    context: ServerCallContext,
    decide: (task: Task) => Promise<TaskEdit | undefined> | TaskEdit | undefined,
    fence?: number,
  ): Promise<Appended | undefined> {
    const scope = this.scopeOf(context);
    const { image, saved, logged } = await this.images.commit({
      taskId,
      scope,
      decide: async (stored) => {
        if (!stored) throw taskNotFound(taskId);
        const edit = await decide(copyTask(stored.task));
        if (!edit) return undefined;
        const task = copyTask(stored.task);
        task.history.push(...(edit.history ?? []));
        return { ...(applied(task, edit.events) as Change), claim: edit.claim };
      },
      fence,
    });
    return saved && image ? { task: copyTask(image.task), logged } : undefined;
  }

  /** The task's logged events after generation `after`, in order, as far as the log holds them (for a caller that may see the task). */
  async readLog(taskId: string, after: number): Promise<LoggedEvent[]> {
    const events: LoggedEvent[] = [];
    for (;;) {
      const read = await readLogAfter(this.db, taskId, events.at(-1)?.generation ?? after);
      events.push(...read);
      if (!isWholeBatch(read)) return events;
    }
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

  /** The tenant and owner a task is stored under, to act on it later without a call context. */
  async scopeOfTask(taskId: string): Promise<TaskScope | undefined> {
    const scope = await findTaskScope(this.db, taskId);
    return scope && { tenant: scope.tenant, owner: scope.owner };
  }

  /** Tasks left SUBMITTED or WORKING (turns in flight when their process stopped), oldest first. */
  async listInterrupted(options: InterruptedOptions = {}): Promise<InterruptedTask[]> {
    return (await this.interruptedRows(options)).map((row) => row.task);
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

/** `events` applied in order to `task` (a working copy), with those that changed it; `replyAfter` as in `TurnWrite`. */
function applied(
  task: Task | undefined,
  events: readonly AgentExecutionEvent[],
  replyAfter?: string,
): { task: Task | undefined; events: AgentExecutionEvent[] } {
  const changed: AgentExecutionEvent[] = [];
  for (const event of events) {
    const eventTaskId = event.kind === 'task' ? event.data.id : event.data.taskId;
    if (task && eventTaskId && eventTaskId !== task.id)
      throw new HarnessError(
        'store_failed',
        `An event of task ${eventTaskId} was given to task ${task.id}; nothing was saved.`,
      );
    const next = applyEvent(task, event, replyAfter);
    if (!next) continue;
    task = next;
    changed.push(event);
  }
  return { task, events: changed };
}

function taskNotFound(taskId: string): HarnessError {
  return new HarnessError('task_not_found', `Task not found: ${taskId}`);
}
