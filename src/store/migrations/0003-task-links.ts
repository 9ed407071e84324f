import type { Kysely, Migration } from 'kysely';

/** 0003: which task started which (sub-tasks), in start order. */
export const createTaskLinks: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('task_links')
      .addColumn('child_id', 'text', (c) => c.primaryKey())
      .addColumn('parent_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('task_links_parent').on('task_links').columns(['parent_id', 'seq']).execute();
  },
};
