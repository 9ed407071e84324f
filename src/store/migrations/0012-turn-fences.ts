import { sql, type Kysely, type Migration } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * 0012: fencing a turn's writes by its lease (`coordination/turn-leases.ts`). Each lease gets an epoch from
 * one sequence, greater than every earlier one on any instance; each task row keeps the fence
 * its turns' writes are checked against. On SQLite the columns stay 0: one process alone cannot
 * lose a lease to another writer.
 */
export const turnFencesMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (isPostgres(db)) await sql`create sequence turn_lease_epochs`.execute(db);
    const epoch = isPostgres(db) ? sql`nextval('turn_lease_epochs')` : sql`0`;
    await sql`alter table turn_leases add column epoch bigint not null default ${epoch}`.execute(db);
    await sql`alter table tasks add column fence_epoch bigint not null default 0`.execute(db);
  },
};
