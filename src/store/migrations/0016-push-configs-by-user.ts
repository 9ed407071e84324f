import type { Kysely, Migration } from 'kysely';

/**
 * 0016: push configs counted per user (`put`'s bound, `push.maxConfigsPerUser`) by an index on
 * their tenant and owner, not a scan of every user's.
 */
export const pushConfigsByUserMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.createIndex('push_configs_scope_idx').on('push_configs').columns(['tenant', 'owner']).execute();
  },
};
