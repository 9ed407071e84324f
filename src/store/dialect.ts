import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * Which engine a `Kysely` talks to, for the few places where SQLite and PostgreSQL must be
 * told apart: the migration bookkeeping's schema, a collation, row locks. Everything else in
 * `store/` is written once, with portable builders.
 */
export function isPostgres<DB>(db: Kysely<DB>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
