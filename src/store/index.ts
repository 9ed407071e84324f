import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { migrateToLatest, openSqliteDatabase, type Database, type Durability } from './database.js';
import { SqlMessageClaimStore } from './message-claim-store.js';
import type { SubtaskRecords } from '../runtime/task-state.js';
import { SqlTaskStateStore } from './task-state-store.js';
import { SqlTaskStore, type SqlTaskStoreOptions } from './task-store.js';

/**
 * The harness's durable storage, opened once at start-up: one SQLite file in the data folder
 * holding tasks, harness task state and the message claims (command replies among them), with
 * its schema migrated before anything reads it.
 */

export const DATABASE_FILE_NAME = 'tiny-harness.db';

/** The memory the store's caches may take together by default: 64 MiB. */
export const DEFAULT_CACHE_BYTES = 64 * 2 ** 20;

export interface OpenStoreOptions extends Omit<SqlTaskStoreOptions, 'cacheBytes'> {
  /** Folder for the database file; created when missing. */
  dataDir: string;
  /**
   * The most memory, in bytes (estimated), the store's caches may take together: task images
   * get fifteen sixteenths, the harness's task state (model choices, usage, links) the rest.
   * Default `DEFAULT_CACHE_BYTES`; 0 turns caching off.
   */
  cacheBytes?: number;
  /** What an acknowledged write survives (see `Durability`); default `normal`. */
  durability?: Durability;
}

export interface Store {
  db: Kysely<Database>;
  tasks: SqlTaskStore;
  state: SqlTaskStateStore;
  claims: SqlMessageClaimStore;
  /** Stores a new sub-task with its link and model in one transaction. */
  subtasks: SubtaskRecords;
  /** Closes the database; the store must not be used afterwards. */
  close(): Promise<void>;
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const { dataDir, cacheBytes = DEFAULT_CACHE_BYTES, durability, ...taskOptions } = options;
  if (!Number.isSafeInteger(cacheBytes) || cacheBytes < 0) throw new RangeError(`cacheBytes must be a whole number of bytes >= 0, not ${cacheBytes}`);
  const stateBytes = Math.floor(cacheBytes / 16);
  const db = openSqliteDatabase(join(dataDir, DATABASE_FILE_NAME), durability);
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const tasks = new SqlTaskStore(db, { ...taskOptions, cacheBytes: cacheBytes - stateBytes });
  const state = new SqlTaskStateStore(db, { cacheBytes: stateBytes });
  return {
    db,
    tasks,
    state,
    claims: new SqlMessageClaimStore(db),
    subtasks: {
      createSubtask: (subtask, parentId, model, context) =>
        state.writeSubtask(parentId, subtask.id, model, (writes) => tasks.create(subtask, context, writes)),
    },
    close: () => db.destroy(),
  };
}

export { openSqliteDatabase, migrateToLatest } from './database.js';
export type * from './database.js';
export { migrations, InCodeMigrationProvider } from './migrations.js';
export { SqlTaskStore, DEFAULT_TASK_CACHE_BYTES, type SqlTaskStoreOptions, type TaskScope } from './task-store.js';
export { SqlTaskStateStore, DEFAULT_STATE_CACHE_BYTES, type SqlTaskStateStoreOptions } from './task-state-store.js';
export { SqlMessageClaimStore } from './message-claim-store.js';
export { interruptedTurnMessage, IN_FLIGHT_STATES, type InterruptedTask } from './interrupted.js';
