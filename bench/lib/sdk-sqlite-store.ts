/**
 * The SDK's own durable store, `DatabaseTaskStore`, on a SQLite file in WAL mode with
 * `synchronous = NORMAL` (the harness's defaults), its tables made by the SDK's `a2a-db` bin:
 * the durable work an SDK user would otherwise run, as a baseline.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { packageRoot } from './report.js';

export interface SdkSqliteStore {
  store: DatabaseTaskStore;
  close(): Promise<void>;
}

/** Creates the file's tables with `a2a-db upgrade` and opens the store; throws with the bin's output if it fails. */
export async function openSdkSqliteStore(file: string): Promise<SdkSqliteStore> {
  mkdirSync(dirname(file), { recursive: true });
  const bin = join(packageRoot('@a2a-js/sdk'), 'dist/cli/a2a_db.js');
  const upgrade = spawnSync(process.execPath, [bin, 'upgrade', '--url', `sqlite:${file}`, '--store', 'tasks'], {
    encoding: 'utf8',
  });
  if (upgrade.status !== 0) throw new Error(`a2a-db upgrade failed: ${upgrade.stderr || upgrade.stdout}`);
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { store: new DatabaseTaskStore(db), close: () => db.destroy() };
}
