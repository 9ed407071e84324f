import type { Kysely, Migration } from 'kysely';

/**
 * 0019: push delivery's own leases (`coordination/push-leases.ts`): the instance delivering a
 * (task, config) pair's notifications, one at a time per pair. Beside the turns' leases, not
 * among them: a pair is not a task, its lease fences no write and leaves no turn to recover.
 * Like a turn's lease it names a live instance (the foreign key), so a survivor taking a dead
 * instance's row takes its pairs too. On SQLite the table exists and stays empty.
 */
export const pushLeasesMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('push_leases')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('config_id', 'text', (c) => c.notNull())
      .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id'))
      .addPrimaryKeyConstraint('push_leases_pkey', ['task_id', 'config_id'])
      .execute();
    await db.schema.createIndex('push_leases_instance_idx').on('push_leases').column('instance_id').execute();
  },
};
