import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.js';
import { QueryTemplate } from './query-template.js';
import type { DueHead, LoggedEvent, PendingDelivery, StoredPushConfig } from '../ports.js';
import { readTogether } from './reads-together.js';

/**
 * Push notifications' outbox (docs/push.md): the deliveries owed to configs, one per config of
 * a task and event, written in the transaction that logs the event (`insertDeliveries`). The
 * deliverer (`runtime/push-delivery.ts`) takes each pair's pending generations in order,
 * deletes them once delivered, puts a pair off until its retry, or keeps a delivery as failed
 * once out of retries; a failed one is pruned `push.keepFailedForMs` after its last attempt.
 * The configs themselves are `push-store.ts`'s.
 */

/** How long a delivery kept as failed stays after its last attempt: a week (`config/schema.ts` keeps the same). */
export const DEFAULT_PUSH_KEEP_FAILED_FOR_MS = 7 * 86_400_000;

export class SqlPushOutbox {
  constructor(protected readonly db: Kysely<Database>) {}

  /**
   * The pairs due by `nowMs`, each as its first pending delivery, soonest due first; at most
   * `limit`. Only rows due are looked at (the due index): a pair waiting for a retry has every
   * pending row put off with its first (`attemptFailed`), so an idle outbox of dead receivers
   * costs a pass nothing.
   */
  async heads(nowMs: number, limit: number): Promise<DueHead[]> {
    const { rows } = await HEADS.run(this.db, [nowMs, limit]);
    return rows.map((r) => ({
      taskId: r.task_id,
      configId: r.config_id,
      generation: Number(r.generation),
      nextAttemptMs: Number(r.next_attempt_ms),
    }));
  }

  /** When the next pending delivery after `nowMs` is due (a retry), or undefined when none waits. */
  async nextDueAfter(nowMs: number): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('push_deliveries')
      .select((eb) => eb.fn.min('next_attempt_ms').as('next'))
      .where('state', '=', 'pending')
      .where('next_attempt_ms', '>', nowMs)
      .executeTakeFirst();
    return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
  }

  /**
   * The pair's pending deliveries in generation order, at most `limit`, with its config; none
   * when the first is not due by `nowMs` (a retry waits) or the config is gone.
   */
  async due(taskId: string, configId: string, nowMs: number, limit: number): Promise<PendingDelivery[]> {
    const { rows } = await DUE.run(this.db, [taskId, configId, limit]);
    if (rows.length === 0 || Number(rows[0]!.next_attempt_ms) > nowMs) return [];
    const config = toConfig({ task_id: taskId, config_id: configId, ...rows[0]! });
    return rows.map((row) => ({
      config,
      generation: Number(row.generation),
      eventJson: row.event_json,
      attempts: Number(row.attempts),
      firstAttemptMs: row.first_attempt_ms === null ? undefined : Number(row.first_attempt_ms),
    }));
  }

  /**
   * The deliveries are done: they go. They are the pair's first pending ones (a batch of `due`),
   * so the range between the least and the greatest holds no other pending one.
   */
  async delivered(taskId: string, configId: string, generations: readonly number[]): Promise<void> {
    if (generations.length === 0) return;
    await DELIVERED.run(this.db, [taskId, configId, generations[0]!, generations.at(-1)!]);
  }

  /**
   * An attempt, made at `atMs`, failed: tried again at `nextAttemptMs`, or kept as failed when
   * that is undefined; a failed delivery's `next_attempt_ms` is then its last attempt's time,
   * which `pruneFailed` goes by.
   */
  async attemptFailed(
    taskId: string,
    configId: string,
    generation: number,
    attempt: { atMs: number; attempts: number; firstAttemptMs: number; nextAttemptMs?: number; error: string },
  ): Promise<void> {
    // One statement: the delivery's own record, and the pair's later deliveries waiting with it
    // (then `heads` never reads them), or, once it has failed for good, due at once.
    const head = (value: unknown, column: string) =>
      sql`case when generation = ${generation} then ${value} else ${sql.ref(column)} end`;
    await sql`update push_deliveries set
      next_attempt_ms = ${attempt.nextAttemptMs ?? attempt.atMs},
      attempts = ${head(attempt.attempts, 'attempts')},
      first_attempt_ms = ${head(attempt.firstAttemptMs, 'first_attempt_ms')},
      last_error = ${head(attempt.error.slice(0, 500), 'last_error')},
      state = ${head(attempt.nextAttemptMs === undefined ? 'failed' : 'pending', 'state')}
      where task_id = ${taskId} and config_id = ${configId} and state = 'pending' and generation >= ${generation}`.execute(
      this.db,
    );
  }

  /**
   * Removes at most `limit` deliveries kept as failed whose last attempt was more than `keepMs`
   * before `nowMs`, oldest first (one bounded statement, on the due index); returns how many went.
   */
  async pruneFailed(keepMs: number, limit: number, nowMs = Date.now()): Promise<number> {
    const result = await this.db
      .deleteFrom('push_deliveries')
      .where((eb) =>
        eb(
          eb.refTuple('task_id', 'config_id', 'generation'),
          'in',
          eb
            .selectFrom('push_deliveries as old')
            .select(['old.task_id', 'old.config_id', 'old.generation'])
            .where('old.state', '=', 'failed')
            .where('old.next_attempt_ms', '<', nowMs - keepMs)
            .orderBy('old.next_attempt_ms')
            .limit(limit)
            .$asTuple('task_id', 'config_id', 'generation'),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** How many of the task's deliveries ran out of retries. */
  async failedCount(taskId: string): Promise<number> {
    const [row] = await readTogether(this.db, FAILED_COUNT.compile(this.db, [taskId]));
    return Number(row?.n ?? 0);
  }
}

/** How many of a task's deliveries failed: `/status` reads it (built once, as below). */
const FAILED_COUNT = new QueryTemplate<Database, readonly [string], { n: number | string }>(1, (db, taskId) =>
  db
    .selectFrom('push_deliveries')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('task_id', '=', taskId)
    .where('state', '=', 'failed'),
);

// The deliverer's statements, built once (`query-template.ts`): each delivery runs them.

/** Each pair's first pending delivery due by a time, soonest first (`heads`). */
const HEADS = new QueryTemplate<
  Database,
  readonly [number, number],
  { task_id: string; config_id: string; generation: number | string; next_attempt_ms: number | string }
>(2, (db, nowMs, limit) =>
  db
    .selectFrom('push_deliveries as d')
    .select(['d.task_id', 'd.config_id', 'd.generation', 'd.next_attempt_ms'])
    .where('d.state', '=', 'pending')
    .where('d.next_attempt_ms', '<=', nowMs)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('push_deliveries as e')
            .select('e.generation')
            .whereRef('e.task_id', '=', 'd.task_id')
            .whereRef('e.config_id', '=', 'd.config_id')
            .where('e.state', '=', 'pending')
            .whereRef('e.generation', '<', 'd.generation'),
        ),
      ),
    )
    .orderBy('d.next_attempt_ms')
    .limit(limit),
);

/** A pair's pending deliveries in order, with its config (`due`). */
const DUE = new QueryTemplate<
  Database,
  readonly [string, string, number],
  {
    generation: number | string;
    event_json: string;
    attempts: number | string;
    first_attempt_ms: number | string | null;
    next_attempt_ms: number | string;
    url: string;
    token: string;
    auth_json: string | null;
  }
>(3, (db, taskId, configId, limit) =>
  db
    .selectFrom('push_deliveries as d')
    .innerJoin('push_configs as c', (j) =>
      j.onRef('c.task_id', '=', 'd.task_id').onRef('c.config_id', '=', 'd.config_id'),
    )
    .select(['d.generation', 'd.event_json', 'd.attempts', 'd.first_attempt_ms', 'd.next_attempt_ms'])
    .select(['c.url', 'c.token', 'c.auth_json'])
    .where('d.task_id', '=', taskId)
    .where('d.config_id', '=', configId)
    .where('d.state', '=', 'pending')
    .orderBy('d.generation')
    .limit(limit),
);

/** A pair's pending deliveries from one generation to another go (`delivered`). */
const DELIVERED = new QueryTemplate<Database, readonly [string, string, number, number]>(
  4,
  (db, taskId, configId, first, last) =>
    db
      .deleteFrom('push_deliveries')
      .where('task_id', '=', taskId)
      .where('config_id', '=', configId)
      .where('state', '=', 'pending')
      .where('generation', '>=', first)
      .where('generation', '<=', last),
);

export function toConfig(row: {
  task_id: string;
  config_id: string;
  url: string;
  token: string;
  auth_json: string | null;
}): StoredPushConfig {
  return {
    taskId: row.task_id,
    id: row.config_id,
    url: row.url,
    token: row.token,
    ...(row.auth_json ? { authentication: JSON.parse(row.auth_json) as StoredPushConfig['authentication'] } : {}),
  };
}

/**
 * The deliveries the events owe, one per config of the task and event, in the transaction that
 * logs them, after `insertLogRows`: one statement, reading the events just inserted, which
 * inserts nothing when the task has no config. Resolves with whether it inserted any. A new
 * delivery is due at once: its `next_attempt_ms` is 0, which no clock can be behind (the
 * store's, which never goes back, may run ahead of the deliverer's by a few ms, and
 * PostgreSQL's is another machine's).
 */
export async function insertDeliveries(
  trx: Transaction<Database> | Kysely<Database>,
  taskId: string,
  logged: readonly LoggedEvent[],
): Promise<boolean> {
  if (logged.length === 0) return false;
  const result =
    await sql`insert into push_deliveries (task_id, config_id, generation, event_json, state, attempts, next_attempt_ms)
    select c.task_id, c.config_id, e.generation, e.event_json, 'pending', 0, 0
    from push_configs c join task_events e on e.task_id = c.task_id
    where c.task_id = ${taskId} and e.generation >= ${logged[0]!.generation} and e.generation <= ${logged.at(-1)!.generation}`.execute(
      trx,
    );
  return Number(result.numAffectedRows ?? 0) > 0;
}
