import { sql, type Kysely, type Migration } from 'kysely';

/**
 * 0005: every message id a user sent (CMD-13, CMD-34), recorded before the message is
 * processed, with the task it went to and, for a command, its reply: one record for resends of
 * turns and commands alike. Replaces `command_replies`, whose rows move over under their
 * task's tenant and owner, with an empty digest (content unknown).
 */
export const messageClaims: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('message_claims')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text')
      .addColumn('reply_json', 'text')
      .addPrimaryKeyConstraint('message_claims_pkey', ['tenant', 'owner', 'message_id'])
      .execute();
    await db
      .insertInto('message_claims')
      .columns(['tenant', 'owner', 'message_id', 'digest', 'task_id', 'reply_json'])
      .expression(
        db
          .selectFrom('command_replies as r')
          .innerJoin('tasks as t', 't.id', 'r.task_id')
          .select(['t.tenant', 't.owner', 'r.message_id', sql<string>`''`.as('digest'), 'r.task_id', 'r.reply_json']),
      )
      .onConflict((oc) => oc.columns(['tenant', 'owner', 'message_id']).doNothing())
      .execute();
    await db.schema.dropTable('command_replies').execute();
  },
};
