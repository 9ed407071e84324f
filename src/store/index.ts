import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { openSqliteDatabase, type Database, type Durability } from './database.js';
import { migrateToLatest } from './migrations/runner.js';
import { ClaimPruning } from './claim-pruning.js';
import { SqlMessageClaimStore } from './message-claim-store.js';
import { TaskFeeds } from './task-feeds.js';
import { LOG_KEEP_MS, pruneLog } from './task-log.js';
import { DEFAULT_PUSH_KEEP_FAILED_FOR_MS } from './push-outbox.js';
import { SqlPushStore } from './push-store.js';
import { SqlTaskQueue } from './task-queue.js';
import { SqlTaskStateStore } from './task-state-store.js';
import { SqlToolGrants } from './tool-grants.js';
import { DEFAULT_HOOK_KEY_RETENTION_MS, SqlSchedules } from './schedule-store.js';
import { SqlTaskStore, type SqlTaskStoreOptions } from './task-store.js';
import type { TransactionListener } from './timed-transactions.js';
import type { ForkRecords, SubtaskRecords } from '../ports.js';

/**
 * The harness's durable storage, opened once at start-up: tasks, harness task state and the
 * message claims (command replies among them), with the schema migrated before anything reads
 * it. Either one SQLite file in the data folder, which this process alone uses (the default),
 * or a PostgreSQL database that several harness processes share (`databaseUrl`).
 */

export const DATABASE_FILE_NAME = 'tiny-harness.db';

/** The memory the store's caches may take together by default: 64 MiB. */
export const DEFAULT_CACHE_BYTES = 64 * 2 ** 20;

/** 24 hours, as payment APIs keep idempotency keys: a retry comes within that (`config/schema.ts` keeps the same). */
export const DEFAULT_MESSAGE_ID_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface OpenStoreOptions extends Omit<SqlTaskStoreOptions, 'cacheBytes' | 'shared'> {
  /** Folder for the SQLite database file, created when missing; not used with `databaseUrl`. */
  dataDir?: string;
  /** This instance's id (`Coordination.instanceId`), recorded with the message claims it makes; default a new one. */
  instanceId?: string;
  /**
   * A PostgreSQL database (`postgres://` or `postgresql://` URL) instead of the SQLite file: any
   * number of harness processes may share it. Its schema is the first of the URL's search path
   * (`?options=-c%20search_path%3Dname`; default `public`). The URL may hold a password: it is
   * never logged or put in an error (`describeDatabaseUrl`).
   */
  databaseUrl?: string;
  /**
   * The most memory, in bytes (estimated), the store's caches may take together: task images
   * get fifteen sixteenths, the harness's task state (model choices, usage, links) the rest;
   * on PostgreSQL the task images get it all (task state is read each time there).
   * Default `DEFAULT_CACHE_BYTES`; 0 turns caching off.
   */
  cacheBytes?: number;
  /** What an acknowledged write survives on SQLite (see `Durability`); default `normal`. PostgreSQL's own settings govern there. */
  durability?: Durability;
  /** PostgreSQL: told when an idle connection fails (the pool replaces it); see `PostgresDatabaseOptions`. */
  onConnectionError?: (error: Error) => void;
  /** PostgreSQL: how long a transaction may wait idle; see `PostgresDatabaseOptions.idleInTransactionMs`. */
  idleInTransactionMs?: number;
  /** How long handled messages are remembered, for resends (CMD-34); default `DEFAULT_MESSAGE_ID_RETENTION_MS`. */
  messageIdRetentionMs?: number;
  /** How long a push delivery kept as failed stays after its last attempt; default `DEFAULT_PUSH_KEEP_FAILED_FOR_MS`. */
  pushKeepFailedForMs?: number;
  /** How long a hook's idempotency key is kept (`schedules.hookKeyRetentionMs`); default `DEFAULT_HOOK_KEY_RETENTION_MS`. */
  hookKeyRetentionMs?: number;
  /** Told how many failed push deliveries a pass pruned (the metrics count them). */
  onPushPruned?: (count: number) => void;
  /** Told when a pass pruning old message claims, log events, failed push deliveries or hooks' keys fails (the next pass tries again). */
  onPruneError?: (error: unknown) => void;
  /** Told when reading a task's log for its readers here failed (shared). */
  onFeedError?: (error: unknown, what: string) => void;
  /** Told of each transaction's end: how long it ran and whether it committed (the store's metrics). */
  onTransaction?: TransactionListener;
}

export interface Store {
  db: Kysely<Database>;
  /**
   * Whether other processes may write this database (PostgreSQL): what lives only in this
   * process's memory (turns, the readers of task logs) is then not the whole truth.
   */
  shared: boolean;
  tasks: SqlTaskStore;
  /** The readers of task logs here: each is handed the events committed after it began. */
  feeds: TaskFeeds;
  /**
   * Shared: where this store says it logged events, for the coordination to wake the other
   * instances following the task.
   */
  events?: { onLogged(wake: (taskId: string, generation: number) => void): void };
  state: SqlTaskStateStore;
  /** The tools each user allowed for good in each conversation (`/approve always`). */
  grants: SqlToolGrants;
  claims: SqlMessageClaimStore;
  /** Push notifications' configs and their outbox (`push-store.ts`). */
  push: SqlPushStore;
  /** Each task's queue of messages sent while a turn ran (`task-queue.ts`). */
  queue: SqlTaskQueue;
  /** Schedules and their runs (issue 39, `schedule-store.ts`). */
  schedules: SqlSchedules;
  /** Told when a write here logged events that owe push deliveries: the deliverer is woken. */
  onPushOwed(handler: (taskId: string) => void): void;
  /** Stores a new sub-task with its link and model in one transaction. */
  subtasks: SubtaskRecords;
  /** Stores a fork (CMD-37) with its model in one transaction. */
  forks: ForkRecords;
  /** Resolves once the database answers a `select 1`: what `/readyz` asks. */
  ping(): Promise<void>;
  /** Closes the database; the store must not be used afterwards. */
  close(): Promise<void>;
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const {
    dataDir,
    databaseUrl,
    instanceId,
    cacheBytes = DEFAULT_CACHE_BYTES,
    durability,
    onConnectionError,
    idleInTransactionMs,
    messageIdRetentionMs = DEFAULT_MESSAGE_ID_RETENTION_MS,
    pushKeepFailedForMs = DEFAULT_PUSH_KEEP_FAILED_FOR_MS,
    hookKeyRetentionMs = DEFAULT_HOOK_KEY_RETENTION_MS,
    onPushPruned,
    onPruneError = () => undefined,
    onFeedError = () => undefined,
    onTransaction,
    ...taskOptions
  } = options;
  if (!Number.isSafeInteger(cacheBytes) || cacheBytes < 0)
    throw new RangeError(`cacheBytes must be a whole number of bytes >= 0, not ${cacheBytes}`);
  if (databaseUrl === undefined && dataDir === undefined)
    throw new TypeError('openStore needs a dataDir or a databaseUrl');
  const shared = databaseUrl !== undefined;
  const stateBytes = shared ? 0 : Math.floor(cacheBytes / 16);
  const id = instanceId ?? randomUUID();
  const db = shared
    ? await (
        await import('./postgres-database.js')
      ).openPostgresDatabase(databaseUrl, { onConnectionError, instanceId: id, idleInTransactionMs, onTransaction })
    : openSqliteDatabase(join(dataDir!, DATABASE_FILE_NAME), durability, onTransaction);
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const push = new SqlPushStore(db, { shared });
  try {
    await push.load();
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const feeds = new TaskFeeds(shared ? db : undefined, onFeedError);
  let wake: ((taskId: string, generation: number) => void) | undefined;
  let pushOwed: ((taskId: string) => void) | undefined;
  const claims = new SqlMessageClaimStore(db, id, { shared });
  const tasks = new SqlTaskStore(db, {
    ...taskOptions,
    cacheBytes: cacheBytes - stateBytes,
    shared,
    mayOwePush: (taskId) => push.mayOwe(taskId),
    // Alone, a command's claim is recorded in the write of its reply (shared, it is recorded first).
    recordClaim: shared ? undefined : (trx, taskId, claim) => claims.recordIn(trx, taskId, claim),
    onLogged: (taskId, logged, pushed) => {
      feeds.committed(taskId, logged);
      wake?.(taskId, logged.at(-1)!.generation);
      if (pushed) pushOwed?.(taskId);
    },
  });
  const state = new SqlTaskStateStore(db, { cacheBytes: stateBytes, shared });
  const pruning = new ClaimPruning({ claims, retentionMs: messageIdRetentionMs, onError: onPruneError });
  // None kept (0): nothing is claimed, and the records of an earlier setting are pruned.
  pruning.start();
  // Shared, the instances' heartbeat ticks prune the log (`coordination/instance-liveness.ts`).
  const logPruning = shared
    ? undefined
    : new ClaimPruning({
        claims: { prune: (keepMs) => pruneLog(db, keepMs) },
        retentionMs: LOG_KEEP_MS,
        onError: onPruneError,
      });
  logPruning?.start();
  // Every instance prunes; two deleting the same rows is harmless, each counts what it deleted.
  const pushPruning = new ClaimPruning({
    claims: { prune: (keepMs, limit) => push.pruneFailed(keepMs, limit) },
    retentionMs: pushKeepFailedForMs,
    onError: onPruneError,
    onPruned: onPushPruned,
  });
  pushPruning.start();
  const schedules = new SqlSchedules(db);
  // Hooks' idempotency keys past their time: cleared (their runs stay), by every instance alike.
  const keyPruning = new ClaimPruning({
    claims: { prune: (keptMs, limit) => schedules.pruneHookKeys(keptMs, limit) },
    retentionMs: hookKeyRetentionMs,
    onError: onPruneError,
  });
  keyPruning.start();
  return {
    db,
    shared,
    tasks,
    feeds,
    events: shared ? { onLogged: (handler) => (wake = handler) } : undefined,
    state,
    grants: new SqlToolGrants(db),
    claims,
    push,
    queue: new SqlTaskQueue(db),
    schedules,
    onPushOwed: (handler) => (pushOwed = handler),
    subtasks: {
      createSubtask: (subtask, parentId, model, context) =>
        state.writeSubtask(parentId, subtask.id, model, async (writes) => {
          await tasks.create(subtask, context, writes);
        }),
    },
    forks: {
      createFork: (fork, model, context) =>
        state.writeTaskModel(fork.id, model, async (writes) => {
          await tasks.create(fork, context, writes);
        }),
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await pruning.stop();
      await logPruning?.stop();
      await pushPruning.stop();
      await keyPruning.stop();
      await feeds.settled();
      await db.destroy();
    },
  };
}

export { openSqliteDatabase } from './database.js';
export { createMigrator, InCodeMigrationProvider, migrateToLatest } from './migrations/runner.js';
export { describeDatabaseUrl, isPostgresUrl } from './database-url.js';
export type { PostgresDatabaseOptions } from './postgres-database.js';
export type * from './database.js';
export { migrations } from './migrations/index.js';
export {
  SqlTaskStore,
  DEFAULT_TASK_CACHE_BYTES,
  type SqlTaskStoreOptions,
  type InterruptedOptions,
  type TaskScope,
} from './task-store.js';
export { SqlTaskStateStore, DEFAULT_STATE_CACHE_BYTES, type SqlTaskStateStoreOptions } from './task-state-store.js';
export { SqlMessageClaimStore, type SqlMessageClaimStoreOptions } from './message-claim-store.js';
export type { ClaimAcceptance } from '../ports.js';
export { ClaimPruning, type ClaimPruningOptions } from './claim-pruning.js';
export { TaskFeeds, LogSubscription } from './task-feeds.js';
export { SqlPushStore } from './push-store.js';
export { SqlPushOutbox } from './push-outbox.js';
export { SqlTaskQueue } from './task-queue.js';
export { interruptedTurnMessage, IN_FLIGHT_STATES, type InterruptedTask } from './interrupted.js';
