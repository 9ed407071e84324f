import type { Kysely, Migration } from 'kysely';

/**
 * 0014: push notifications' configs and their outbox (`push-store.ts`). Configs are keyed by
 * task and id and carry the task's tenant and owner; deliveries by task, config and generation.
 */
export const pushMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('push_configs')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('config_id', 'text', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('auth_json', 'text')
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('push_configs_pkey', ['task_id', 'config_id'])
      .execute();
    await db.schema
      .createTable('push_deliveries')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('config_id', 'text', (c) => c.notNull())
      .addColumn('generation', 'bigint', (c) => c.notNull())
      .addColumn('event_json', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_ms', 'bigint', (c) => c.notNull())
      .addColumn('first_attempt_ms', 'bigint')
      .addColumn('last_error', 'text')
      .addPrimaryKeyConstraint('push_deliveries_pkey', ['task_id', 'config_id', 'generation'])
      .execute();
    await db.schema
      .createIndex('push_deliveries_due_idx')
      .on('push_deliveries')
      .columns(['state', 'next_attempt_ms'])
      .execute();
  },
};
