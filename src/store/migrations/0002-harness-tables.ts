import type { Kysely, Migration } from 'kysely';

/**
 * 0002: state the harness owns (model choices, token usage) and the command reply log. No
 * foreign keys to `tasks`: a model may be chosen for a task before its first save.
 */
export const createHarnessTables: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('task_settings')
      .addColumn('task_id', 'text', (c) => c.primaryKey())
      .addColumn('model', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('context_settings')
      .addColumn('context_id', 'text', (c) => c.primaryKey())
      .addColumn('model', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('task_usage')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('input_tokens', 'bigint', (c) => c.notNull())
      .addColumn('output_tokens', 'bigint', (c) => c.notNull())
      .addColumn('first_seq', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_usage_pkey', ['task_id', 'model'])
      .execute();
    await db.schema
      .createTable('command_replies')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('reply_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('command_replies_pkey', ['task_id', 'message_id'])
      .execute();
  },
};
