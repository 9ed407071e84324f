import type { Kysely } from 'kysely';
import { HarnessError, isHarnessError, turnFencedError } from '../errors.js';
import type { Database } from './database.js';
import { QueryTemplate } from './query-template.js';
import { applyPlan } from './plan-writes.js';
import type { SavePlan } from './save-plan.js';
import type { StoredTask } from './stored-task.js';
import { KeyedSerialQueue } from './keyed-serial-queue.js';
import { scopedKey, TaskCache, type TaskScope } from './task-cache.js';
import { findTaskScope, readStoredTask } from './task-rows.js';
import { fitsOneStatement, writeInOneStatement } from './one-statement-write.js';
import {
  planCommit,
  writeInTransaction,
  writesNothing,
  type ClaimWriter,
  type Commit,
  type TaskWrite,
  type Written,
} from './task-commit.js';
import type { LoggedEvent } from '../ports.js';
import { readTogether } from './reads-together.js';

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
  /** How a write accepts its message's claim in its transaction (default `acceptClaimIn`, shared). */
  acceptClaim?: ClaimWriter;
}

/** Shared: the task row's version, which every read of a kept image checks first. */
const STORED_VERSION = new QueryTemplate<Database, readonly [string], { version: number }>(1, (db, taskId) =>
  db.selectFrom('tasks').select('version').where('id', '=', taskId),
);

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
  private readonly acceptClaim: ClaimWriter | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    options: TaskImagesOptions,
  ) {
    this.cache = new TaskCache(options.cacheBytes);
    this.now = options.now;
    this.shared = options.shared;
    this.onLogged = options.onLogged ?? (() => undefined);
    this.mayOwePush = options.mayOwePush ?? (() => true);
    this.acceptClaim = options.acceptClaim;
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
    return (await readTogether(this.db, STORED_VERSION.compile(this.db, [taskId])))[0]?.version;
  }

  /**
   * The one way a task is written, under the task's lock: `decide` (which must be pure, see
   * `Decide`) sees the freshest stored image and says what to save, and the commit writes what
   * differs from that image with its log, its push deliveries and whatever goes alongside, all
   * or nothing. Its strategy follows the commit's shape:
   * - alone (SQLite): one transaction, decided on the kept image, the truth;
   * - shared (PostgreSQL), decided on a kept image and fitting one statement: that statement,
   *   guarded by the image's version (`one-statement-write.ts`);
   * - shared, any other (or when that guard failed): a transaction that locks the task's row,
   *   reads the task again when another instance changed it and decides again on that, so that
   *   `decide` and the write see and change the same version, whichever instance writes.
   * An error of `decide` is passed on.
   */
  async commit(write: TaskWrite): Promise<Written> {
    const { taskId, scope } = write;
    return this.locks.run(scopedKey(scope, taskId), async () => {
      const written = this.shared ? await this.commitShared(write) : await this.commitAlone(write);
      if (written.logged.length > 0) this.onLogged(taskId, written.logged, written.pushed === true);
      return written;
    });
  }

  private async commitAlone(write: TaskWrite): Promise<Written> {
    const stored = await this.imageLocked(write.taskId, write.scope);
    // No other instance to fence off.
    const commit = await planCommit({ ...write, fence: undefined }, stored, this.now);
    if (!commit) return { image: stored, saved: false, logged: [] };
    if (writesNothing(commit)) return { image: stored, saved: true, logged: commit.logged };
    let pushed = false;
    try {
      pushed = await this.db
        .transaction()
        .execute((trx) => writeInTransaction(trx, commit, this.mayOwePush(write.taskId), this.acceptClaim));
    } catch (error) {
      throw await this.writeFailed(error, write.taskId, write.scope, commit.plan);
    }
    return this.committed(stored, commit, pushed);
  }

  private async commitShared(write: TaskWrite): Promise<Written> {
    const kept = this.cache.get(write.scope, write.taskId);
    if (kept) {
      const commit = await planCommit(write, kept, this.now);
      // Otherwise (nothing to save, or more than one statement can hold), decided again on the locked row: the image may be outdated.
      if (commit && fitsOneStatement(commit)) {
        let written: { pushed: boolean } | undefined;
        try {
          written = await writeInOneStatement(this.db, commit, kept.version);
        } catch (error) {
          throw await this.writeFailed(error, write.taskId, write.scope, commit.plan);
        }
        if (written) return this.committed(kept, commit, written.pushed);
      }
    }
    return this.commitLocked(write, kept);
  }

  /** Shared: decided and written in a transaction that holds the task row's lock. */
  private async commitLocked(write: TaskWrite, kept: StoredTask | undefined, firstTry = true): Promise<Written> {
    const { taskId, scope, fence } = write;
    let commit: Commit | undefined;
    let decision: { error: unknown } | undefined;
    let outcome: { stored: StoredTask | undefined; pushed?: boolean };
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
        commit = await planCommit(write, stored, this.now).catch((error: unknown) => {
          decision = { error };
          throw error;
        });
        if (!commit || writesNothing(commit)) return { stored };
        return { stored, pushed: await writeInTransaction(trx, commit, this.mayOwePush(taskId), this.acceptClaim) };
      });
    } catch (error) {
      if (decision) throw decision.error;
      // The write's own refusal (its message's claim taken): nothing to add to it.
      if (!commit || isHarnessError(error)) {
        this.cache.delete(scope, taskId);
        throw error;
      }
      // Another instance stored the same new task first: decide again on what it stored.
      if (
        firstTry &&
        commit.plan.isNew &&
        !write.alongside &&
        (error as { code?: unknown })?.code === UNIQUE_VIOLATION &&
        (await this.storedIn(taskId, scope))
      ) {
        return this.commitLocked(write, undefined, false);
      }
      throw await this.writeFailed(error, taskId, scope, commit.plan);
    }
    const { stored, pushed } = outcome;
    if (pushed === undefined) {
      // Read again (or still current): worth keeping for the next use.
      if (stored) this.cache.set(stored);
      return commit
        ? { image: stored, saved: true, logged: commit.logged }
        : { image: stored, saved: false, logged: [] };
    }
    return this.committed(stored, commit!, pushed);
  }

  /** After a commit: the image it leaves, kept for the next use. */
  private committed(stored: StoredTask | undefined, commit: Commit, pushed: boolean): Written {
    const image = applyPlan(stored, commit.identity, commit.plan, commit.now.toISOString());
    this.cache.set(image);
    return { image, saved: true, logged: commit.logged, pushed };
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
