import { sql, type Kysely, type Migration } from 'kysely';

/**
 * 0013: one ordered event log per task, on both backends (`task-log.ts`). Each task row keeps
 * its **generation**, the number of its last event (1: created); `task_events` holds the events
 * by generation, appended in the transaction that writes the task. The log is written by this
 * process on SQLite too, for the streams that read it; the per-task counters of 0007 and the
 * events' origins go (the generation, under the row's lock, numbers them). Existing rows start
 * at generation 1 with no events kept: nobody can be reading a log across the upgrade.
 */
export const taskLogMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('tasks').renameColumn('event_seq', 'generation').execute();
    await sql`update tasks set generation = 1`.execute(db);
    await db.schema.dropTable('task_events').execute();
    await db.schema.dropTable('task_event_seqs').execute();
    await db.schema
      .createTable('task_events')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('generation', 'bigint', (c) => c.notNull())
      .addColumn('event_json', 'text', (c) => c.notNull())
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_events_pkey', ['task_id', 'generation'])
      .execute();
    await db.schema.createIndex('task_events_created_idx').on('task_events').column('created_ms').execute();
  },
};
