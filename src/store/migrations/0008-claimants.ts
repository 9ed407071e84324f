import type { Kysely, Migration } from 'kysely';

/**
 * 0008: which instance made each message claim, so that an instance finding a claim not yet
 * accepted can tell a request still going elsewhere (leave it) from one cut short (take it over).
 */
export const claimants: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('message_claims').addColumn('claimant', 'text').execute();
  },
};
