import { sql, type Kysely, type Migration } from 'kysely';

/**
 * 0024: a hook's idempotency keys (docs/schedules.md, "Trigger URLs"). A POST carrying an
 * `Idempotency-Key` keeps it on the run it claims (`schedule_runs.idempotency_key`), in the claim's
 * own insert: a unique index on (schedule, key) lets one claim per key land, so a sender's retry,
 * on any instance and even while the first claim is being made, finds the first run instead of
 * making a second. Null for every other run (nulls are distinct in a unique index, on SQLite and
 * PostgreSQL alike). A key is cleared once older than `schedules.hookKeyRetentionMs`; the partial
 * index on `claimed_ms` lets that pass read only the rows that still hold one.
 */
export const hookIdempotencyKeysMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('schedule_runs').addColumn('idempotency_key', 'text').execute();
    await db.schema
      .createIndex('schedule_runs_key_idx')
      .on('schedule_runs')
      .columns(['schedule_id', 'idempotency_key'])
      .unique()
      .execute();
    await db.schema
      .createIndex('schedule_runs_key_age_idx')
      .on('schedule_runs')
      .column('claimed_ms')
      .where(sql.ref('idempotency_key'), 'is not', null)
      .execute();
  },
};
