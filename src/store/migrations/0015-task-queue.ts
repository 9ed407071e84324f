import type { Kysely, Migration } from 'kysely';

/**
 * 0015: the tasks' queues of messages sent while a turn ran (`task-queue.ts`), keyed by task and
 * place; a message id is queued once per task.
 */
export const taskQueueMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('task_queue')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('message_json', 'text', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('authenticated', 'integer', (c) => c.notNull())
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_queue_pkey', ['task_id', 'seq'])
      .addUniqueConstraint('task_queue_message_key', ['task_id', 'message_id'])
      .execute();
  },
};
