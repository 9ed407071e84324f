import type { Kysely, Migration } from 'kysely';

/**
 * 0023: the push-notification configs given with `/schedule` (its message's
 * `configuration.taskPushNotificationConfig`), kept with the schedule as JSON (an array of
 * `{id, url, token, authentication?}`; null: none) and set on each run's task, beside those of
 * the task `/schedule` was sent to (docs/schedules.md).
 */
export const schedulePushConfigsMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('schedules').addColumn('push_configs', 'text').execute();
  },
};
