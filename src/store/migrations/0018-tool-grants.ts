import type { Kysely, Migration } from 'kysely';

/** 0018: the tools each user allowed for good in each context (`/approve always`, TOOL-5). */
export const toolGrantsMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('tool_grants')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('granted_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('tool_grants_pkey', ['tenant', 'owner', 'context_id', 'tool'])
      .execute();
  },
};
