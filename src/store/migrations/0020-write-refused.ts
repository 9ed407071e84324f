import { sql, type Kysely, type Migration } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * 0020 (PostgreSQL only): `write_refused(reason)`, which raises SQLSTATE `TH409` with `reason`. A
 * write in one statement (`one-statement-write.ts`) calls it when one part of it could not be
 * made after another was, so that the statement, and with it the whole write, is undone: plain
 * SQL has no way to abort a statement on a condition. SQLite writes in a transaction instead.
 */
export const writeRefusedMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (!isPostgres(db)) return;
    await sql`create function write_refused(reason text) returns int language plpgsql as $$
      begin
        raise exception using errcode = 'TH409', message = reason;
      end
    $$`.execute(db);
  },
};
