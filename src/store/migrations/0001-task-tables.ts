import type { Kysely, Migration } from 'kysely';

/**
 * 0001: tasks split so that one event writes only what it changed. History messages,
 * artifact headers and artifact parts are rows of their own, appended by sequence number;
 * the task row holds what is replaced as a whole (state, status, metadata).
 */
export const createTaskTables: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('tasks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('state', 'integer', (c) => c.notNull())
      .addColumn('status_json', 'text')
      .addColumn('metadata_json', 'text', (c) => c.notNull())
      // '' when the status has no timestamp: list orders and pages by this text, like the SDK.
      .addColumn('status_timestamp', 'text', (c) => c.notNull())
      // Milliseconds since the epoch, for `statusTimestampAfter`; null when unparseable.
      .addColumn('status_time_ms', 'bigint')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('tasks_scope_context_idx')
      .on('tasks')
      .columns(['tenant', 'owner', 'context_id'])
      .execute();
    await db.schema
      .createIndex('tasks_scope_status_time_idx')
      .on('tasks')
      .columns(['tenant', 'owner', 'status_timestamp', 'id'])
      .execute();
    await db.schema.createIndex('tasks_status_timestamp_idx').on('tasks').column('status_timestamp').execute();
    await db.schema.createIndex('tasks_state_idx').on('tasks').column('state').execute();

    await db.schema
      .createTable('task_messages')
      .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('message_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_messages_pkey', ['task_id', 'seq'])
      .addUniqueConstraint('task_messages_message_id_key', ['task_id', 'message_id'])
      .execute();

    await db.schema
      .createTable('task_artifacts')
      .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
      .addColumn('artifact_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('header_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_artifacts_pkey', ['task_id', 'artifact_id'])
      .execute();

    await db.schema
      .createTable('artifact_parts')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('artifact_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('part_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('artifact_parts_pkey', ['task_id', 'artifact_id', 'seq'])
      .addForeignKeyConstraint(
        'artifact_parts_artifact_fkey',
        ['task_id', 'artifact_id'],
        'task_artifacts',
        ['task_id', 'artifact_id'],
        (c) => c.onDelete('cascade'),
      )
      .execute();
  },
};
