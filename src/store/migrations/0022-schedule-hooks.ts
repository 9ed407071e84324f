import type { Kysely, Migration } from 'kysely';

/**
 * 0022: trigger URLs (issue 39, docs/schedules.md): a hook is a schedule of kind `hook`, never
 * due, run by a POST to its URL. `schedules.hook_sha256` keeps its secret's SHA-256 (never the
 * secret); `schedule_runs.input` keeps the body a POST gave its run, claimed with the run, so an
 * instance that takes the claim over runs it as it was asked. Both columns are null otherwise.
 */
export const scheduleHooksMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('schedules').addColumn('hook_sha256', 'text').execute();
    await db.schema.alterTable('schedule_runs').addColumn('input', 'text').execute();
  },
};
