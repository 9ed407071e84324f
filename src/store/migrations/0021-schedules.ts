import type { Kysely, Migration } from 'kysely';

/**
 * 0021: schedules (issue 39, docs/schedules.md) and their runs. A run is claimed by inserting
 * its row, keyed by (schedule, due time): of several instances, the one whose insert lands
 * starts it. The row names the task the run makes before the run starts, so an instance that
 * finds a claim whose instance is gone can tell a run that began (its task exists) from one
 * that never did, and start only the latter, under the same task id. A due time missed by more
 * than `schedules.catchUpMs` is a row too, `skipped`, which `/schedule` shows.
 */
export const schedulesMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('schedules')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('authenticated', 'integer', (c) => c.notNull())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('origin_task_id', 'text', (c) => c.notNull())
      .addColumn('new_context', 'integer', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('prompt', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('spec', 'text', (c) => c.notNull())
      .addColumn('time_zone', 'text', (c) => c.notNull())
      .addColumn('paused', 'integer', (c) => c.notNull())
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      .addColumn('next_due_ms', 'bigint')
      .execute();
    await db.schema.createIndex('schedules_owner_idx').on('schedules').columns(['tenant', 'owner']).execute();
    await db.schema.createIndex('schedules_due_idx').on('schedules').column('next_due_ms').execute();
    await db.schema
      .createTable('schedule_runs')
      .addColumn('schedule_id', 'text', (c) => c.notNull())
      .addColumn('due_ms', 'bigint', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('instance_id', 'text')
      .addColumn('task_id', 'text')
      .addColumn('claimed_ms', 'bigint', (c) => c.notNull())
      .addColumn('missed', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('schedule_runs_pkey', ['schedule_id', 'due_ms'])
      .execute();
    await db.schema.createIndex('schedule_runs_state_idx').on('schedule_runs').column('state').execute();
  },
};
