import type { Kysely, Migration } from 'kysely';

/**
 * 0004: the model each user last chose in a context (CMD-22, CMD-35). Context ids are a
 * client's choice, so one id may be two users' contexts. Replaces `context_settings`; a choice
 * moves to each user who has a task in the context with that model chosen (who made the
 * choice was not recorded).
 */
export const contextModelsByUser: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('context_models')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('context_models_pkey', ['tenant', 'owner', 'context_id'])
      .execute();
    await db
      .insertInto('context_models')
      .columns(['tenant', 'owner', 'context_id', 'model'])
      .expression(
        db
          .selectFrom('context_settings as c')
          .innerJoin('tasks as t', 't.context_id', 'c.context_id')
          .innerJoin('task_settings as s', (join) =>
            join.onRef('s.task_id', '=', 't.id').onRef('s.model', '=', 'c.model'),
          )
          .select(['t.tenant', 't.owner', 'c.context_id', 'c.model'])
          .distinct(),
      )
      .execute();
    await db.schema.dropTable('context_settings').execute();
  },
};
