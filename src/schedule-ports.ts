/**
 * The contract between the store and the runtime for schedules (issue 39): kept beside
 * `ports.ts` and below both, as it is, so that neither imports the other's types.
 */

/**
 * A prompt run on a schedule (issue 39, docs/schedules.md), as the store keeps it: its runs are
 * its user's (authenticated as the request that made it was), in its context or each in a new
 * one (`newContext`); the push configs given with `/schedule` (`pushConfigs`) and those of
 * `originTaskId` (where `/schedule` was sent) deliver them.
 */
export interface StoredSchedule {
  id: string;
  tenant: string;
  owner: string;
  authenticated: boolean;
  contextId: string;
  originTaskId: string;
  newContext: boolean;
  model: string;
  prompt: string;
  /**
   * `cron`: `spec` a cron expression; `every`: an interval in ms; `at`: an instant (ISO 8601);
   * `hook`: never due, run by a POST to its trigger URL (`spec` empty, `hookSha256` set).
   */
  kind: 'cron' | 'every' | 'at' | 'hook';
  spec: string;
  timeZone: string;
  paused: boolean;
  createdMs: number;
  /** The next due time (ms since the epoch); undefined once an `at` schedule has run, and for a hook. */
  nextDueMs: number | undefined;
  /** A hook's secret, as its SHA-256 (hex): the secret itself is never stored. */
  hookSha256?: string;
  /** The push configs the `/schedule` message carried, set on each run's task; none: []. */
  pushConfigs: SchedulePushConfig[];
}

/** A push-notification config kept with a schedule: as a task's (`ports.ts`), with no task. */
export interface SchedulePushConfig {
  id: string;
  url: string;
  /** Sent to the webhook, never logged nor shown. */
  token: string;
  authentication?: { scheme: string; credentials: string };
}

/** What a POST to a hook's URL gave its run, added to the prompt: its text, or its JSON. */
export type HookInput = { text: string } | { data: unknown };

/** A due time of a schedule, claimed by an instance (then started) or skipped; `taskId` chosen with the claim, `missed` the due times a skip stands for. */
export interface ScheduleRun {
  scheduleId: string;
  dueMs: number;
  state: 'claimed' | 'started' | 'skipped';
  instanceId?: string;
  taskId?: string;
  claimedMs: number;
  missed: number;
  /** A hook's run: the body POSTed, kept with the claim so that an instance taking it over runs it as asked. */
  input?: HookInput;
  /** A hook's run: the `Idempotency-Key` its POST carried; a repeat of it, while kept, is answered with this run. */
  idempotencyKey?: string;
}

/** Where schedules and their runs are kept (`store/schedule-store.ts`); `who` scopes a user's own. */
export interface ScheduleRecords {
  /** False, storing nothing, when its owner has `max` already. */
  add(schedule: StoredSchedule, max: number): Promise<boolean>;
  ofOwner(who: { tenant: string; owner: string }): Promise<StoredSchedule[]>;
  get(id: string): Promise<StoredSchedule | undefined>;
  remove(who: { tenant: string; owner: string }, id: string): Promise<boolean>;
  /** The schedule as it becomes, or undefined when the owner has none such. */
  setPaused(
    who: { tenant: string; owner: string },
    id: string,
    paused: boolean,
    nextDueMs: number | undefined,
  ): Promise<StoredSchedule | undefined>;
  /** Schedules not paused whose next due time is at most `nowMs`. */
  due(nowMs: number, limit: number): Promise<StoredSchedule[]>;
  /** The nearest next due time of the schedules not paused (ms since the epoch); undefined when none. */
  nextDueAt(): Promise<number | undefined>;
  /**
   * In one transaction: moves the schedule's next due time from `fromMs` to `nextDueMs` and
   * inserts the runs' rows. False, writing nothing, when another instance moved it first: exactly once.
   */
  advance(scheduleId: string, fromMs: number, nextDueMs: number | undefined, runs: ScheduleRun[]): Promise<boolean>;
  /** Claims still `claimed` whose instance is gone (not among `instances` when shared; any other alone). */
  orphaned(instanceId: string, shared: boolean): Promise<ScheduleRun[]>;
  /** Moves an orphaned claim to this instance: false when another took it first. */
  takeOver(run: ScheduleRun, instanceId: string): Promise<boolean>;
  /** The claim's run began (its task exists). */
  started(run: Pick<ScheduleRun, 'scheduleId' | 'dueMs'>): Promise<void>;
  taskExists(taskId: string): Promise<boolean>;
  /**
   * Claims a hook's run (its row keyed by the time of the POST, moved on by a millisecond when
   * taken): `paused` or `gone` (removed, or no hook), writing nothing, as the schedule stands then.
   * With `run.idempotencyKey`, the hook's run claimed with that key in the `keyKeptMs` before
   * `run.claimedMs` is `first`, nothing written: one claim per key lands, across instances too.
   */
  claimHookRun(
    run: ScheduleRun,
    keyKeptMs: number,
  ): Promise<{ claimed: ScheduleRun } | { first: ScheduleRun } | { refused: 'paused' | 'gone' }>;
  /** Removes a claim whose run was refused before it started (the turn bound, a drain). */
  unclaim(run: Pick<ScheduleRun, 'scheduleId' | 'dueMs'>): Promise<void>;
  /** Gives the owner's hook a new secret (its SHA-256); undefined when the owner has no such hook. */
  rotateHook(who: { tenant: string; owner: string }, id: string, sha256: string): Promise<StoredSchedule | undefined>;
  /** The latest run and the latest skip of each schedule. */
  latest(scheduleIds: readonly string[]): Promise<Map<string, { run?: ScheduleRun; skip?: ScheduleRun }>>;
}
