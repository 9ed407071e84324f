import type { Task } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { Kysely, Transaction } from 'kysely';
import { HarnessError, turnFencedError } from '../errors.js';
import type { Database } from './database.js';
import { applyPlan, writePlan, type TaskIdentity } from './plan-writes.js';
import { isEmptyPlan, planSave, type SavePlan } from './save-plan.js';
import type { StoredTask } from './stored-task.js';
import { KeyedSerialQueue } from './keyed-serial-queue.js';
import { scopedKey, TaskCache, type TaskScope } from './task-cache.js';
import { findTaskScope, readStoredTask } from './task-rows.js';
import { insertLogRows, type LoggedEvent } from './task-log.js';
import { insertDeliveries } from './push-outbox.js';
import { fitsOneStatement, writeInOneStatement } from './one-statement-write.js';

/**
 * Where `SqlTaskStore` reads and writes task images: the bounded cache of images, the
 * per-task lock, and the one write path, each of which works alone or shared.
 *
 * Alone (SQLite), this process owns the database and the kept images are the truth. Shared
 * (several instances on PostgreSQL), another instance may write the same task at any moment,
 * so each task row carries a version that every write adds one to: a write locks the row
 * (`SELECT ... FOR UPDATE`) in its transaction and, when the row's version is not the kept
 * image's, reads the task again inside that transaction and plans against that; a read
 * compares the kept image's version with the row's in one small query and reads the task
 * again when they differ.
 */

/** Writes that go in the transaction of a task's save: a new task's records (`SqlTaskStore.create`). */
export type Alongside = (trx: Transaction<Database>) => Promise<unknown>;

/** What a write stores: the task as it becomes, and the events that say how (appended to its log). */
export interface Change {
  task: Task;
  events: readonly AgentExecutionEvent[];
}

/** What a write saves, decided from the freshest stored image: a change, or undefined for nothing. */
export type Decide = (stored: StoredTask | undefined) => Change | undefined | Promise<Change | undefined>;

/** After a write: the stored image, whether its `Decide` asked for a save, and the events it logged. */
export interface Written {
  image: StoredTask | undefined;
  saved: boolean;
  logged: LoggedEvent[];
  /** Whether the write owed push deliveries (the task has push configs): the deliverer is woken. */
  pushed?: boolean;
}

export interface TaskImagesOptions {
  /** The most the kept images may weigh together, in bytes; 0 keeps none. */
  cacheBytes: number;
  /** The clock for row timestamps. */
  now: () => Date;
  /** Whether other processes write the same database. */
  shared: boolean;
  /**
   * Told of the events each write logged, once it has committed and the image is updated, still
   * under the task's lock: so in generation order, and before any later read of the task here.
   */
  onLogged?: (taskId: string, logged: readonly LoggedEvent[], pushed: boolean) => void;
  /** False when a write of the task owes no push delivery (it has no config): the outbox's statement is skipped. */
  mayOwePush?: (taskId: string) => boolean;
}

/** PostgreSQL's code for a unique constraint that refused a row. */
const UNIQUE_VIOLATION = '23505';

export class TaskImages {
  private readonly cache: TaskCache;
  /**
   * Reads that miss the cache and writes, one at a time per task: two saves of the same task (a
   * running turn and a command) never plan against the same image, and a read that missed the
   * cache cannot put back an image a save outdated.
   */
  private readonly locks = new KeyedSerialQueue();
  private readonly now: () => Date;
  private readonly shared: boolean;
  private readonly onLogged: (taskId: string, logged: readonly LoggedEvent[], pushed: boolean) => void;
  private readonly mayOwePush: (taskId: string) => boolean;

  constructor(
    private readonly db: Kysely<Database>,
    options: TaskImagesOptions,
  ) {
    this.cache = new TaskCache(options.cacheBytes);
    this.now = options.now;
    this.shared = options.shared;
    this.onLogged = options.onLogged ?? (() => undefined);
    this.mayOwePush = options.mayOwePush ?? (() => true);
  }

  /** The kept image when it is of `version` (the row's, as just read); for `list`, without churning the order. */
  kept(scope: TaskScope, taskId: string, version: number): StoredTask | undefined {
    const image = this.cache.peek(scope, taskId);
    return image?.version === version ? image : undefined;
  }

  /** Forgets every kept image. */
  clear(): void {
    this.cache.clear();
  }

  /** How many images are kept and what they weigh. */
  usage(): { tasks: number; bytes: number; maxBytes: number } {
    return { tasks: this.cache.size, bytes: this.cache.bytes, maxBytes: this.cache.maxBytes };
  }

  /**
   * The task's image in `scope`: kept, or read under the task's lock so no save can outdate
   * it; undefined when no task has that id in that scope, stored elsewhere or not. Shared, a
   * kept image is used only while the row's version is still the image's.
   */
  async read(taskId: string, scope: TaskScope): Promise<StoredTask | undefined> {
    if (!this.shared)
      return (
        this.cache.get(scope, taskId) ?? this.locks.run(scopedKey(scope, taskId), () => this.imageLocked(taskId, scope))
      );
    const kept = this.cache.get(scope, taskId);
    if (kept && kept.version === (await this.storedVersion(taskId))) return kept;
    return this.locks.run(scopedKey(scope, taskId), () => this.readImage(taskId, scope));
  }

  /** Alone: the kept image, or the task read and kept; under the task's lock. */
  private async imageLocked(taskId: string, scope: TaskScope): Promise<StoredTask | undefined> {
    const cached = this.cache.get(scope, taskId);
    if (cached) return cached;
    const stored = await readStoredTask(this.db, taskId, scope);
    if (stored) this.cache.set(stored);
    return stored;
  }

  /**
   * Shared: the task read again and kept, under the task's lock. Read in one
   * snapshot, so that another instance's write never lands half in the image.
   */
  private async readImage(taskId: string, scope: TaskScope): Promise<StoredTask | undefined> {
    const stored = await this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute((trx) => readStoredTask(trx, taskId, scope));
    if (stored) this.cache.set(stored);
    else this.cache.delete(scope, taskId);
    return stored;
  }

  private async storedVersion(taskId: string): Promise<number | undefined> {
    return (await this.db.selectFrom('tasks').select('version').where('id', '=', taskId).executeTakeFirst())?.version;
  }

  /**
   * The one way a task is written, under the task's lock. `decide` sees the freshest
   * stored image and says what to save; the save writes what differs from that image, in one
   * transaction with `alongside`. Shared, that transaction first locks the task's row and reads
   * the task again when another instance changed it, so that `decide` and the write see and
   * change the same version, whichever instance writes. An error of `decide` is passed on.
   *
   * `fence` (shared only): the write is a turn's, under its lease's epoch. Read with the row's
   * lock, in the statement that takes it (no round trip of its own), a row fenced by a greater
   * epoch refuses the write (`turn_fenced`): another instance took the task over. Otherwise the
   * row's fence becomes this epoch. A new task has no row to fence: nobody else knows its id.
   */
  async write(
    taskId: string,
    scope: TaskScope,
    decide: Decide,
    alongside?: Alongside,
    fence?: number,
  ): Promise<Written> {
    return this.locks.run(scopedKey(scope, taskId), async () => {
      const written = this.shared
        ? await this.writeShared(taskId, scope, decide, alongside, fence)
        : await this.writeAlone(taskId, scope, decide, alongside);
      if (written.logged.length > 0) this.onLogged(taskId, written.logged, written.pushed === true);
      return written;
    });
  }

  private async writeAlone(taskId: string, scope: TaskScope, decide: Decide, alongside?: Alongside): Promise<Written> {
    const stored = await this.imageLocked(taskId, scope);
    const change = await decide(stored);
    if (!change) return { image: stored, saved: false, logged: [] };
    const { task } = change;
    const logged = numbered(stored, change.events);
    const plan = planSave(stored, task, logged.at(-1)?.generation);
    if (isEmptyPlan(plan) && !alongside) return { image: stored, saved: true, logged };
    const identity = { id: taskId, contextId: stored?.task.contextId ?? task.contextId, ...scope };
    const now = this.now();
    let pushed = false;
    try {
      await this.db.transaction().execute(async (trx) => {
        await writePlan(trx, identity, plan, now.toISOString());
        await insertLogRows(trx, taskId, logged, now.getTime());
        await alongside?.(trx);
        if (this.mayOwePush(taskId)) pushed = await insertDeliveries(trx, taskId, logged);
      });
    } catch (error) {
      throw await this.writeFailed(error, taskId, scope, plan);
    }
    const image = applyPlan(stored, identity, plan, now.toISOString());
    this.cache.set(image);
    return { image, saved: true, logged, pushed };
  }

  private async writeShared(
    taskId: string,
    scope: TaskScope,
    decide: Decide,
    alongside: Alongside | undefined,
    fence: number | undefined,
    firstTry = true,
  ): Promise<Written> {
    const kept = this.cache.get(scope, taskId);
    if (kept && !alongside && firstTry) {
      const written = await this.writeKeptInOneStatement(taskId, scope, kept, decide, fence);
      if (written) return written;
    }
    let plan: SavePlan | undefined;
    let decision: { error: unknown } | undefined;
    let outcome: Written & { write?: { identity: TaskIdentity; now: string } };
    try {
      outcome = await this.db.transaction().execute(async (trx) => {
        const row = await trx
          .selectFrom('tasks')
          .select(['version', 'fence_epoch'])
          .where('id', '=', taskId)
          .where('tenant', '=', scope.tenant)
          .where('owner', '=', scope.owner)
          .forUpdate()
          .executeTakeFirst();
        if (row && fence !== undefined && Number(row.fence_epoch) > fence) throw turnFencedError(taskId);
        const stored = !row
          ? undefined
          : kept?.version === row.version
            ? kept
            : await readStoredTask(trx, taskId, scope);
        const change = await Promise.resolve(decide(stored)).catch((error: unknown) => {
          decision = { error };
          throw error;
        });
        if (!change) return { image: stored, saved: false, logged: [] };
        const { task } = change;
        const logged = numbered(stored, change.events);
        plan = planSave(stored, task, logged.at(-1)?.generation);
        if (isEmptyPlan(plan) && !alongside) return { image: stored, saved: true, logged };
        const identity = { id: taskId, contextId: stored?.task.contextId ?? task.contextId, ...scope };
        const now = this.now();
        await writePlan(trx, identity, plan, now.toISOString(), fence);
        await insertLogRows(trx, taskId, logged, now.getTime());
        await alongside?.(trx);
        const pushed = this.mayOwePush(taskId) && (await insertDeliveries(trx, taskId, logged));
        return { image: stored, saved: true, logged, pushed, write: { identity, now: now.toISOString() } };
      });
    } catch (error) {
      if (decision) throw decision.error;
      if (!plan) {
        this.cache.delete(scope, taskId);
        throw error;
      }
      // Another instance stored the same new task first: decide again on what it stored.
      if (
        firstTry &&
        plan.isNew &&
        !alongside &&
        (error as { code?: unknown })?.code === UNIQUE_VIOLATION &&
        (await this.storedIn(taskId, scope))
      ) {
        return this.writeShared(taskId, scope, decide, alongside, fence, false);
      }
      throw await this.writeFailed(error, taskId, scope, plan);
    }
    const { image, saved, logged, pushed, write } = outcome;
    if (!write) {
      // Read again (or still current): worth keeping for the next use.
      if (image) this.cache.set(image);
      return { image, saved, logged };
    }
    const next = applyPlan(image, write.identity, plan!, write.now);
    this.cache.set(next);
    return { image: next, saved, logged, pushed };
  }

  /**
   * Shared: the write planned against the kept image and made in one statement, guarded by the
   * image's version (`one-statement-write.ts`). Undefined when it cannot be: `decide` saves
   * nothing (on an image that may be outdated), the plan needs a transaction, or the row moved
   * on; the caller then writes in a transaction, deciding again on the row as it stands.
   */
  private async writeKeptInOneStatement(
    taskId: string,
    scope: TaskScope,
    kept: StoredTask,
    decide: Decide,
    fence: number | undefined,
  ): Promise<Written | undefined> {
    const change = await decide(kept);
    if (!change) return undefined;
    const logged = numbered(kept, change.events);
    const plan = planSave(kept, change.task, logged.at(-1)?.generation);
    if (!fitsOneStatement(plan) || isEmptyPlan(plan)) return undefined;
    const now = this.now();
    let written: { pushed: boolean } | undefined;
    try {
      written = await writeInOneStatement(this.db, taskId, scope, plan, logged, { version: kept.version, fence }, now);
    } catch (error) {
      throw await this.writeFailed(error, taskId, scope, plan);
    }
    if (!written) return undefined;
    const identity = { id: taskId, contextId: kept.task.contextId, ...scope };
    const image = applyPlan(kept, identity, plan, now.toISOString());
    this.cache.set(image);
    return { image, saved: true, logged, pushed: written.pushed };
  }

  /** The error for a write that failed; the image is dropped (the rows say what was stored). */
  private async writeFailed(error: unknown, taskId: string, scope: TaskScope, plan: SavePlan): Promise<HarnessError> {
    this.cache.delete(scope, taskId);
    // A new task whose insert failed on the key: its id is taken in another scope.
    const owner = plan.isNew ? await findTaskScope(this.db, taskId).catch(() => undefined) : undefined;
    if (owner && (owner.tenant !== scope.tenant || owner.owner !== scope.owner)) {
      return new HarnessError(
        'store_failed',
        `Task ${taskId} is stored for another tenant or owner; it was not saved.`,
        { cause: error },
      );
    }
    return new HarnessError('store_failed', `Task ${taskId} could not be saved.`, { cause: error });
  }

  /** Whether the task is stored in this scope now (after another instance's insert won). */
  private async storedIn(taskId: string, scope: TaskScope): Promise<boolean> {
    const owner = await findTaskScope(this.db, taskId).catch(() => undefined);
    return owner !== undefined && owner.tenant === scope.tenant && owner.owner === scope.owner;
  }
}

/** The events numbered after the stored task's generation (a new task's first is 1). */
function numbered(stored: StoredTask | undefined, events: readonly AgentExecutionEvent[]): LoggedEvent[] {
  const after = stored?.generation ?? 0;
  return events.map((event, i) => ({ generation: after + i + 1, event }));
}
