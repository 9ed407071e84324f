import type { Kysely, Migration } from 'kysely';

/**
 * 0007: what instances sharing a PostgreSQL database coordinate through
 * (`PostgresCoordination`). Each running instance has a row whose heartbeat (ms since the
 * epoch, by the database's clock) it renews; a turn's lease names the instance running it, and
 * cannot name an instance that has no row (the foreign key is what lets a sweeper take a dead
 * instance's leases with no lease slipping in meanwhile); a task's events are appended by seq
 * for the instances following the task and pruned minutes later, while the last seq given to
 * each task is kept for good, so no seq is ever given twice. On SQLite the tables exist and stay
 * empty: one process needs none of it.
 */
export const coordinationTables: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('instances')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('heartbeat', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('turn_leases')
      .addColumn('task_id', 'text', (c) => c.primaryKey())
      .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id'))
      .execute();
    await db.schema.createIndex('turn_leases_instance_idx').on('turn_leases').column('instance_id').execute();
    await db.schema
      .createTable('task_events')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('event_json', 'text', (c) => c.notNull())
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_events_pkey', ['task_id', 'seq'])
      .execute();
    await db.schema.createIndex('task_events_created_idx').on('task_events').column('created_ms').execute();
    await db.schema
      .createTable('task_event_seqs')
      .addColumn('task_id', 'text', (c) => c.primaryKey())
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .execute();
  },
};
