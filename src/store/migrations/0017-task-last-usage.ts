import type { Kysely, Migration } from 'kysely';

/**
 * 0017: each task's last model call, its model and token counts (`/context` shows how many
 * input tokens the provider counted), written with the running totals.
 */
export const taskLastUsageMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('task_last_usage')
      .addColumn('task_id', 'text', (c) => c.primaryKey())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('input_tokens', 'bigint', (c) => c.notNull())
      .addColumn('output_tokens', 'bigint', (c) => c.notNull())
      .execute();
  },
};
