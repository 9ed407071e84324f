import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { HarnessError } from '../../errors.js';
import type { Database } from '../database.js';
import { isPostgres } from '../dialect.js';
import { migrations } from './index.js';

/** Hands kysely's `Migrator` the migrations of `index.ts` instead of reading a folder. */
export class InCodeMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { ...migrations };
  }
}

/**
 * Kysely's migrator over the store's migrations. On PostgreSQL its bookkeeping tables go in
 * the schema the store's tables go in (the first of the search path): unqualified, the
 * migrator would take another schema's bookkeeping for its own, as it looks in every schema.
 */
export async function createMigrator<DB>(db: Kysely<DB>): Promise<Migrator> {
  const migrationTableSchema = isPostgres(db) ? await currentSchema(db) : undefined;
  return new Migrator({ db, provider: new InCodeMigrationProvider(), migrationTableSchema });
}

/**
 * Applies every migration not applied yet. Called at start-up (by `openStore`), so a new data
 * folder works at once and an upgraded harness upgrades its schema before it serves anything.
 * On PostgreSQL, kysely's migrator holds an advisory lock while it migrates, so instances
 * starting together apply each migration once.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const { error, results } = await (await createMigrator(db)).migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    throw new HarnessError(
      'store_failed',
      `The database schema could not be upgraded${failed ? ` (migration ${failed})` : ''}.`,
      {
        cause: error,
      },
    );
  }
}

/** PostgreSQL's schema for new tables: the first schema of the search path that exists. */
async function currentSchema<DB>(db: Kysely<DB>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema)
    throw new HarnessError(
      'store_failed',
      'The PostgreSQL search path names no schema that exists: create it, or set the search path.',
    );
  return schema;
}
