import { sql, type Kysely, type Migration } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * 0006: a version on each task row, counting its updates, for instances sharing the database:
 * a save locks the row and compares its version with the image it planned against, a load
 * compares it with the image it keeps (`task-store.ts`).
 *
 * On PostgreSQL also the binary collation ("C") for the text that tasks are listed and paged
 * by: a database's default collation (e.g. en_US) orders punctuation and case otherwise than
 * SQLite and the SDK's in-memory store, whose order `list` keeps. SQLite compares bytes already.
 */
export const taskVersions: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .alterTable('tasks')
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    if (isPostgres(db)) {
      await sql`alter table tasks alter column id type text collate "C", alter column status_timestamp type text collate "C"`.execute(
        db,
      );
    }
  },
};
