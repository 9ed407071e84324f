import type { Kysely, Migration } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * 0011: one id may carry several messages of a task's history (CMD-34: the same id with other
 * content is a new message), so `task_messages` loses its unique key on the message id; the save
 * plan tells stored messages by id and content (`save-plan.ts`). PostgreSQL drops the key;
 * SQLite cannot drop a constraint, so the table is built anew and its rows copied.
 */
export const messagesByContent: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (isPostgres(db)) {
      await db.schema.alterTable('task_messages').dropConstraint('task_messages_message_id_key').execute();
      return;
    }
    await db.schema.alterTable('task_messages').renameTo('task_messages_0010').execute();
    await db.schema
      .createTable('task_messages')
      .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('message_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_messages_pkey', ['task_id', 'seq'])
      .execute();
    await db
      .insertInto('task_messages')
      .columns(['task_id', 'seq', 'message_id', 'message_json'])
      .expression(db.selectFrom('task_messages_0010').select(['task_id', 'seq', 'message_id', 'message_json']))
      .execute();
    await db.schema.dropTable('task_messages_0010').execute();
  },
};
