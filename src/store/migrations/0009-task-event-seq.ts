import type { Kysely, Migration } from 'kysely';

/**
 * 0009: the seq of the last handed-on event each task row reflects (see `TaskEventLog`). Rows
 * written before it reflect none they need: no follower of theirs was running across the upgrade.
 */
export const taskEventSeq: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .alterTable('tasks')
      .addColumn('event_seq', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
