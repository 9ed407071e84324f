import { sql, type Kysely, type Migration } from 'kysely';

/**
 * 0010: a message is its id and its content (CMD-34), so the content digest joins the key: one
 * id may carry several messages, each with its own claim. Each claim is dated, for pruning
 * (existing ones as of the upgrade). Claims from before digests ('', moved over from
 * `command_replies` by 0005) are dropped: their content is unknown, so no resend can match them.
 */
export const claimsByContent: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('message_claims').renameTo('message_claims_0009').execute();
    await db.schema
      .createTable('message_claims')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text')
      .addColumn('reply_json', 'text')
      .addColumn('claimant', 'text')
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      // Named anew: on PostgreSQL the renamed table keeps the name `message_claims_pkey` until it is dropped.
      .addPrimaryKeyConstraint('message_claims_content_pkey', ['tenant', 'owner', 'message_id', 'digest'])
      .execute();
    await db.schema.createIndex('message_claims_created_idx').on('message_claims').column('created_ms').execute();
    await db
      .insertInto('message_claims')
      .columns(['tenant', 'owner', 'message_id', 'digest', 'task_id', 'reply_json', 'claimant', 'created_ms'])
      .expression(
        db
          .selectFrom('message_claims_0009')
          .select(['tenant', 'owner', 'message_id', 'digest', 'task_id', 'reply_json', 'claimant'])
          .select(sql.lit(Date.now()).as('created_ms'))
          .where('digest', '<>', ''),
      )
      .execute();
    await db.schema.dropTable('message_claims_0009').execute();
  },
};
