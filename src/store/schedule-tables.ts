import type { ColumnType } from 'kysely';

/** A 64-bit counter, as `database.ts`'s `Counter` (not imported: that file imports this one). */
type Counter = ColumnType<number | string, number, number>;

/** A prompt run on a schedule (0021, issue 39): whose, where, when. */
export interface SchedulesTable {
  id: string;
  tenant: string;
  owner: string;
  /** 1 when the request that made it was authenticated: its runs are too. */
  authenticated: number;
  context_id: string;
  /** The task `/schedule` was sent to: its push configs deliver the runs' events. */
  origin_task_id: string;
  /** 1: each run in a new context of its own. */
  new_context: number;
  model: string;
  prompt: string;
  /** `cron`, `every` or `at`. */
  kind: string;
  /** The cron expression, the interval in ms, or the instant (ISO 8601), as `kind` says. */
  spec: string;
  time_zone: string;
  paused: number;
  created_ms: Counter;
  /** The next due time, ms since the epoch; null once an `at` schedule has run, and for a hook. */
  next_due_ms: Counter | null;
  /** A hook's secret as its SHA-256 in hex (0022); null for the other kinds. Never the secret. */
  hook_sha256: string | null;
  /** The push configs given with `/schedule` (0023), as JSON: `[{id, url, token, authentication?}]`; null: none. */
  push_configs: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A due run of a schedule, claimed (`claimed`, then `started`) or missed (`skipped`). */
export interface ScheduleRunsTable {
  schedule_id: string;
  due_ms: Counter;
  state: 'claimed' | 'started' | 'skipped';
  /** The instance that claimed it (none for a skip). */
  instance_id: string | null;
  /** The id of the task the run makes, chosen with the claim. */
  task_id: string | null;
  claimed_ms: Counter;
  /** How many due times a skip stands for (1 for a run). */
  missed: number;
  /** A hook's run: the body POSTed, as JSON (`{"text": ...}` or `{"data": ...}`, 0022); null otherwise. */
  input: string | null;
  /** A hook's run: the `Idempotency-Key` its POST carried (0024), unique per hook; cleared once past `schedules.hookKeyRetentionMs`. */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
}
