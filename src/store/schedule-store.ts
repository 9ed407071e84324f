import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { Database } from './database.js';
import { isPostgres } from './dialect.js';
import type { ScheduleRunsTable, SchedulesTable } from './schedule-tables.js';
import type { HookInput, SchedulePushConfig, ScheduleRecords, ScheduleRun, StoredSchedule } from '../schedule-ports.js';

type Owner = { tenant: string; owner: string };

/** 24 hours, as payment APIs keep idempotency keys: a sender's retries come within that (`config/schedules.ts` keeps the same). */
export const DEFAULT_HOOK_KEY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Schedules and their runs (issue 39), read afresh each time: another instance may have moved
 * a schedule on. Exactly once rests on two guards, both in `advance`'s one transaction: the
 * schedule's next due time moves only from the value read (a compare and set), and a run's row
 * is keyed by (schedule, due time). A hook's POST with an idempotency key claims its run with
 * the key, unique per hook (0024): a retry finds the first run instead of claiming another.
 */
export class SqlSchedules implements ScheduleRecords {
  constructor(private readonly db: Kysely<Database>) {}

  async add(schedule: StoredSchedule, max: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // Counted and added in one transaction; shared, two adds at once may both pass by one (a soft bound).
      const { count } = await trx
        .selectFrom('schedules')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('tenant', '=', schedule.tenant)
        .where('owner', '=', schedule.owner)
        .executeTakeFirstOrThrow();
      if (Number(count) >= max) return false;
      await trx.insertInto('schedules').values(toRow(schedule)).execute();
      return true;
    });
  }

  async ofOwner(who: Owner): Promise<StoredSchedule[]> {
    const rows = await this.db
      .selectFrom('schedules')
      .selectAll()
      .where('tenant', '=', who.tenant)
      .where('owner', '=', who.owner)
      .orderBy('created_ms')
      .orderBy('id')
      .execute();
    return rows.map(fromRow);
  }

  async get(id: string): Promise<StoredSchedule | undefined> {
    const row = await this.db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async remove(who: Owner, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom('schedules')
        .where('id', '=', id)
        .where('tenant', '=', who.tenant)
        .where('owner', '=', who.owner)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      // Its claims still `claimed` go too: a run not yet started is not started after /unschedule.
      await trx.deleteFrom('schedule_runs').where('schedule_id', '=', id).execute();
      return true;
    });
  }

  async setPaused(
    who: Owner,
    id: string,
    paused: boolean,
    nextDueMs: number | undefined,
  ): Promise<StoredSchedule | undefined> {
    const result = await this.db
      .updateTable('schedules')
      .set({ paused: paused ? 1 : 0, next_due_ms: nextDueMs ?? null })
      .where('id', '=', id)
      .where('tenant', '=', who.tenant)
      .where('owner', '=', who.owner)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return this.get(id);
  }

  async due(nowMs: number, limit: number): Promise<StoredSchedule[]> {
    const rows = await this.db
      .selectFrom('schedules')
      .selectAll()
      .where('paused', '=', 0)
      .where('next_due_ms', 'is not', null)
      .where('next_due_ms', '<=', nowMs)
      .orderBy('next_due_ms')
      .limit(limit)
      .execute();
    return rows.map(fromRow);
  }

  async nextDueAt(): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('schedules')
      .select((eb) => eb.fn.min('next_due_ms').as('at'))
      .where('paused', '=', 0)
      .where('next_due_ms', 'is not', null)
      .executeTakeFirst();
    return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
  }

  async advance(
    scheduleId: string,
    fromMs: number,
    nextDueMs: number | undefined,
    runs: ScheduleRun[],
  ): Promise<boolean> {
    return this.db
      .transaction()
      .execute(async (trx) => {
        const moved = await trx
          .updateTable('schedules')
          .set({ next_due_ms: nextDueMs ?? null })
          .where('id', '=', scheduleId)
          .where('next_due_ms', '=', fromMs)
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0) return false;
        if (runs.length === 0) return true;
        const inserted = await trx
          .insertInto('schedule_runs')
          .values(runs.map(runRow))
          .onConflict((oc) => oc.columns(['schedule_id', 'due_ms']).doNothing())
          .executeTakeFirst();
        // A row of the same due time exists: another instance claimed it; this transaction writes nothing.
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) < runs.length) throw new AlreadyClaimed();
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof AlreadyClaimed) return false;
        throw error;
      });
  }

  async orphaned(instanceId: string, shared: boolean): Promise<ScheduleRun[]> {
    let query = this.db
      .selectFrom('schedule_runs')
      .selectAll()
      .where('state', '=', 'claimed')
      .where('instance_id', '!=', instanceId);
    if (shared) query = query.where('instance_id', 'not in', (eb) => eb.selectFrom('instances').select('id'));
    const rows = await query.orderBy('due_ms').limit(100).execute();
    return rows.map(runFromRow);
  }

  async takeOver(run: ScheduleRun, instanceId: string): Promise<boolean> {
    const result = await this.db
      .updateTable('schedule_runs')
      .set({ instance_id: instanceId })
      .where('schedule_id', '=', run.scheduleId)
      .where('due_ms', '=', run.dueMs)
      .where('state', '=', 'claimed')
      .where('instance_id', '=', run.instanceId ?? '')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async started(run: Pick<ScheduleRun, 'scheduleId' | 'dueMs'>): Promise<void> {
    await this.db
      .updateTable('schedule_runs')
      .set({ state: 'started' })
      .where('schedule_id', '=', run.scheduleId)
      .where('due_ms', '=', run.dueMs)
      .where('state', '=', 'claimed')
      .execute();
  }

  async taskExists(taskId: string): Promise<boolean> {
    const row = await this.db.selectFrom('tasks').select('id').where('id', '=', taskId).executeTakeFirst();
    return row !== undefined;
  }

  async claimHookRun(
    run: ScheduleRun,
    keyKeptMs: number,
  ): Promise<{ claimed: ScheduleRun } | { first: ScheduleRun } | { refused: 'paused' | 'gone' }> {
    const key = run.idempotencyKey;
    return this.db.transaction().execute(async (trx) => {
      // Read in the claim's transaction, its row locked when shared (SQLite's writers take turns):
      // a hook removed or paused meanwhile takes no more runs.
      let read = trx
        .selectFrom('schedules')
        .select('paused')
        .where('id', '=', run.scheduleId)
        .where('kind', '=', 'hook');
      if (isPostgres(this.db)) read = read.forShare();
      const hook = await read.executeTakeFirst();
      if (!hook) return { refused: 'gone' as const };
      if (key !== undefined) {
        // A retry of a run claimed is answered with it, even once the hook is paused.
        const first = await keyedRun(trx, run.scheduleId, key);
        if (first && first.claimedMs >= run.claimedMs - keyKeptMs) return { first };
        // Kept past its time, not pruned yet: the key is free again.
        if (first) await clearKey(trx, first, key);
      }
      if (hook.paused === 1) return { refused: 'paused' as const };
      // Keyed by (hook, time of the POST): two POSTs in one millisecond take the next free one.
      for (let dueMs = run.dueMs; dueMs < run.dueMs + 1000; dueMs++) {
        const claimed = { ...run, dueMs };
        // Any conflict, the time's or the key's; on PostgreSQL, one with a claim not yet committed
        // waits for it: the key's first claim is read below once committed, never claimed twice.
        const inserted = await trx
          .insertInto('schedule_runs')
          .values(runRow(claimed))
          .onConflict((oc) => oc.doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { claimed };
        const first = key === undefined ? undefined : await keyedRun(trx, run.scheduleId, key);
        if (first) return { first };
      }
      throw new Error(`no free time for a run of hook ${run.scheduleId}`);
    });
  }

  /**
   * Clears at most `limit` hooks' idempotency keys kept more than `keptMs`, oldest first (one
   * bounded statement); returns how many. The runs stay, as every run does.
   */
  async pruneHookKeys(keptMs: number, limit: number, nowMs = Date.now()): Promise<number> {
    const result = await this.db
      .updateTable('schedule_runs')
      .set({ idempotency_key: null })
      .where((eb) =>
        eb(
          eb.refTuple('schedule_id', 'due_ms'),
          'in',
          eb
            .selectFrom('schedule_runs as old')
            .select(['old.schedule_id', 'old.due_ms'])
            .where('old.idempotency_key', 'is not', null)
            .where('old.claimed_ms', '<', nowMs - keptMs)
            .orderBy('old.claimed_ms')
            .limit(limit)
            .$asTuple('schedule_id', 'due_ms'),
        ),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async unclaim(run: Pick<ScheduleRun, 'scheduleId' | 'dueMs'>): Promise<void> {
    await this.db
      .deleteFrom('schedule_runs')
      .where('schedule_id', '=', run.scheduleId)
      .where('due_ms', '=', run.dueMs)
      .where('state', '=', 'claimed')
      .execute();
  }

  async rotateHook(who: Owner, id: string, sha256: string): Promise<StoredSchedule | undefined> {
    const result = await this.db
      .updateTable('schedules')
      .set({ hook_sha256: sha256 })
      .where('id', '=', id)
      .where('kind', '=', 'hook')
      .where('tenant', '=', who.tenant)
      .where('owner', '=', who.owner)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return this.get(id);
  }

  async latest(scheduleIds: readonly string[]): Promise<Map<string, { run?: ScheduleRun; skip?: ScheduleRun }>> {
    const found = new Map<string, { run?: ScheduleRun; skip?: ScheduleRun }>();
    if (scheduleIds.length === 0) return found;
    // The newest row of each (schedule, kind of row): few schedules a user, few rows each to scan.
    const rows = await this.db
      .selectFrom('schedule_runs')
      .selectAll()
      .where('schedule_id', 'in', [...scheduleIds])
      .where(
        'due_ms',
        '=',
        sql<number>`(select max(r.due_ms) from schedule_runs r where r.schedule_id = schedule_runs.schedule_id
          and (r.state = 'skipped') = (schedule_runs.state = 'skipped'))`,
      )
      .execute();
    for (const row of rows) {
      const run = runFromRow(row);
      const entry = found.get(run.scheduleId) ?? {};
      if (run.state === 'skipped') entry.skip = run;
      else entry.run = run;
      found.set(run.scheduleId, entry);
    }
    return found;
  }
}

/** The hook's run claimed with `key`, if one still holds it. */
async function keyedRun(db: Kysely<Database>, scheduleId: string, key: string): Promise<ScheduleRun | undefined> {
  const row = await db
    .selectFrom('schedule_runs')
    .selectAll()
    .where('schedule_id', '=', scheduleId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row && runFromRow(row);
}

async function clearKey(db: Kysely<Database>, run: ScheduleRun, key: string): Promise<void> {
  await db
    .updateTable('schedule_runs')
    .set({ idempotency_key: null })
    .where('schedule_id', '=', run.scheduleId)
    .where('due_ms', '=', run.dueMs)
    .where('idempotency_key', '=', key)
    .execute();
}

/** Thrown inside `advance`'s transaction to undo it. */
class AlreadyClaimed extends Error {}

function toRow(schedule: StoredSchedule): Insertable<SchedulesTable> {
  return {
    id: schedule.id,
    tenant: schedule.tenant,
    owner: schedule.owner,
    authenticated: schedule.authenticated ? 1 : 0,
    context_id: schedule.contextId,
    origin_task_id: schedule.originTaskId,
    new_context: schedule.newContext ? 1 : 0,
    model: schedule.model,
    prompt: schedule.prompt,
    kind: schedule.kind,
    spec: schedule.spec,
    time_zone: schedule.timeZone,
    paused: schedule.paused ? 1 : 0,
    created_ms: schedule.createdMs,
    next_due_ms: schedule.nextDueMs ?? null,
    hook_sha256: schedule.hookSha256 ?? null,
    push_configs: schedule.pushConfigs.length > 0 ? JSON.stringify(schedule.pushConfigs) : null,
  };
}

function fromRow(row: Selectable<SchedulesTable>): StoredSchedule {
  return {
    id: row.id,
    tenant: row.tenant,
    owner: row.owner,
    authenticated: row.authenticated === 1,
    contextId: row.context_id,
    originTaskId: row.origin_task_id,
    newContext: row.new_context === 1,
    model: row.model,
    prompt: row.prompt,
    kind: row.kind as StoredSchedule['kind'],
    spec: row.spec,
    timeZone: row.time_zone,
    paused: row.paused === 1,
    createdMs: Number(row.created_ms),
    nextDueMs: row.next_due_ms === null ? undefined : Number(row.next_due_ms),
    ...(row.hook_sha256 !== null && { hookSha256: row.hook_sha256 }),
    pushConfigs: row.push_configs ? (JSON.parse(row.push_configs) as SchedulePushConfig[]) : [],
  };
}

function runRow(run: ScheduleRun): Insertable<ScheduleRunsTable> {
  return {
    schedule_id: run.scheduleId,
    due_ms: run.dueMs,
    state: run.state,
    instance_id: run.instanceId ?? null,
    task_id: run.taskId ?? null,
    claimed_ms: run.claimedMs,
    missed: run.missed,
    input: run.input === undefined ? null : JSON.stringify(run.input),
    idempotency_key: run.idempotencyKey ?? null,
  };
}

function runFromRow(row: Selectable<ScheduleRunsTable>): ScheduleRun {
  return {
    scheduleId: row.schedule_id,
    dueMs: Number(row.due_ms),
    state: row.state,
    ...(row.instance_id !== null && { instanceId: row.instance_id }),
    ...(row.task_id !== null && { taskId: row.task_id }),
    claimedMs: Number(row.claimed_ms),
    missed: row.missed,
    ...(row.input !== null && { input: JSON.parse(row.input) as HookInput }),
    ...(row.idempotency_key !== null && { idempotencyKey: row.idempotency_key }),
  };
}
