import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { migrateToLatest, openSqliteDatabase, type Database } from './database.js';
import { SqlMessageClaimStore } from './message-claim-store.js';
import { SqlTaskStateStore } from './task-state-store.js';
import { SqlTaskStore, type SqlTaskStoreOptions } from './task-store.js';

/**
 * The harness's durable storage, opened once at start-up: one SQLite file in the data folder
 * holding tasks, harness task state and the message claims (command replies among them), with
 * its schema migrated before anything reads it.
 */

export const DATABASE_FILE_NAME = 'tiny-harness.db';

export interface OpenStoreOptions extends SqlTaskStoreOptions {
  /** Folder for the database file; created when missing. */
  dataDir: string;
}

export interface Store {
  db: Kysely<Database>;
  tasks: SqlTaskStore;
  state: SqlTaskStateStore;
  claims: SqlMessageClaimStore;
  /** Closes the database; the store must not be used afterwards. */
  close(): Promise<void>;
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const { dataDir, ...taskOptions } = options;
  const db = openSqliteDatabase(join(dataDir, DATABASE_FILE_NAME));
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return {
    db,
    tasks: new SqlTaskStore(db, taskOptions),
    state: new SqlTaskStateStore(db),
    claims: new SqlMessageClaimStore(db),
    close: () => db.destroy(),
  };
}

export { openSqliteDatabase, migrateToLatest } from './database.js';
export type * from './database.js';
export { migrations, InCodeMigrationProvider } from './migrations.js';
export { SqlTaskStore, DEFAULT_TASK_CACHE_SIZE, type SqlTaskStoreOptions, type TaskScope } from './task-store.js';
export { SqlTaskStateStore } from './task-state-store.js';
export { SqlMessageClaimStore } from './message-claim-store.js';
export { interruptedTurnMessage, INTERRUPTED_TURN_TEXT, IN_FLIGHT_STATES, type InterruptedTask } from './interrupted.js';
