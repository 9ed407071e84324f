/**
 * The scheduler (issue 39): every instance ticks; each due run is started by exactly one. A tick
 * claims what came due (`ScheduleRecords.advance`: the schedule's next due time moved by compare
 * and set, the run's row keyed by schedule and due time), then starts the claimed run's turn.
 * A claim names its task's id before the turn starts, so a claim left by an instance that died
 * is taken over by another and started, unless its task exists (it began; recovery ends it as
 * interrupted like any turn cut short): never twice, never silently skipped. A due time missed
 * by more than `catchUpMs` (the harness was down) is recorded as skipped, and `/schedule` shows it.
 *
 * When to look: after each look, a timer is set for the nearest due time in the store, but never
 * further than `pollMs` ahead, so that a schedule another instance made, and a claim an instance
 * left as it stopped, are found within `pollMs`. A schedule made or resumed here sets it again at
 * once (`rearm`); a dead instance taken over here looks at once (`lookNow`).
 */
import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { hasErrorCode } from '../../errors.js';
import type { ScheduleRecords, ScheduleRun, StoredSchedule } from '../../schedule-ports.js';
import { traceScheduledRun } from '../../telemetry/traces.js';
import { dueThrough } from './schedule-times.js';
import type { ScheduleRuns, StartedRun } from './schedule-runs.js';

/** How a due run came out, as the metrics count it. */
export type RunOutcome =
  'completed' | 'failed' | 'input_required' | 'canceled' | 'rejected' | 'skipped' | 'not_started';

export interface SchedulerOptions {
  records: ScheduleRecords;
  runs: Pick<ScheduleRuns, 'start'>;
  instanceId: string;
  /** Whether other instances share the store (PostgreSQL). */
  shared: boolean;
  /** How late a due run may still start (`schedules.catchUpMs`). */
  catchUpMs: number;
  /** The longest wait between two looks for due runs, in ms (`schedules.pollMs`); 0: only when `tick` is called. */
  pollMs: number;
  /** The clock (tests give a fake one). */
  now: () => number;
  /** The stored state of a run's task once its turn has ended. */
  stateOf(taskId: string, context: ServerCallContext): Promise<TaskState | undefined>;
  onOutcome?(outcome: RunOutcome, count: number): void;
  onError(error: unknown, what: string, scheduleId?: string): void;
  onInfo(what: string, fields: Record<string, unknown>): void;
}

/** A claim made here whose turn could not start yet (every turn place taken): it waits, never dropped. */
interface Waiting {
  schedule: StoredSchedule;
  claim: ScheduleRun;
  attempts: number;
}

/** The most due schedules one look reads. */
const DUE_PAGE = 100;

/** Attempts at starting a claimed run that fails for a reason other than the turn bound. */
const MAX_ATTEMPTS = 5;

export class Scheduler {
  private readonly waiting = new Map<string, Waiting>();
  private timer: NodeJS.Timeout | undefined;
  /** Which setting of the timer is the latest: an older one, answered later, sets nothing. */
  private arming = 0;
  private ticking: Promise<void> | undefined;
  private again = false;
  private started = false;
  private stopped = false;
  private readonly runsUnderWay = new Set<Promise<void>>();

  constructor(private readonly options: SchedulerOptions) {}

  start(): void {
    this.started = true;
    void this.tick();
  }

  /** Stops ticking; the runs started go on as turns (the drain ends them). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
  }

  /** A schedule was made or resumed here: the timer is set again for the nearest due time. */
  rearm(): void {
    if (this.started) void this.arm(undefined);
  }

  /** Looks now, once started: an instance that stopped was taken for dead, its claims may be left. */
  lookNow(): void {
    if (this.started) void this.tick();
  }

  /** Whether claims made here wait for a turn place. */
  get waitingRuns(): number {
    return this.waiting.size;
  }

  /** A turn place may be free: claims waiting for one try again. */
  placeFreed(): void {
    if (this.waiting.size > 0) void this.tick();
  }

  /** Claims and starts what is due now; one tick at a time (a tick asked for meanwhile runs after it). */
  tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return this.ticking;
    }
    this.ticking = (async () => {
      let looked: number;
      do {
        this.again = false;
        looked = this.options.now();
        await this.once().catch((error: unknown) => this.options.onError(error, 'looking for due schedules'));
      } while (this.again && !this.stopped);
      if (this.started) await this.arm(looked);
    })().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  /**
   * Sets the timer for the nearest due time, at most `pollMs` ahead. `looked`: when the look just
   * made began; a time due by then and still there was not claimed (an error, told already): it
   * is tried again after `pollMs`, not at once.
   */
  private async arm(looked: number | undefined): Promise<void> {
    const { pollMs, records, now, onError } = this.options;
    if (pollMs <= 0 || this.stopped) return;
    const turn = ++this.arming;
    let wait = pollMs;
    try {
      const at = await records.nextDueAt();
      if (at !== undefined && (looked === undefined || at > looked)) wait = Math.min(pollMs, Math.max(0, at - now()));
    } catch (error) {
      onError(error, 'reading the next due time');
    }
    if (turn !== this.arming || this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), wait);
    this.timer.unref();
  }

  /** Resolves once the outcomes of the runs started here are counted (tests). */
  async settled(): Promise<void> {
    while (this.runsUnderWay.size > 0) await Promise.all(this.runsUnderWay);
  }

  private async once(): Promise<void> {
    if (this.stopped) return;
    for (const [key, entry] of [...this.waiting]) {
      // Removed meanwhile (`/unschedule` deletes its claims too): the waiting run goes with it.
      if (await this.options.records.get(entry.schedule.id)) await this.startClaimed(entry);
      else this.waiting.delete(key);
    }
    await this.takeOverOrphans();
    const { records, now } = this.options;
    const due = await records.due(now(), DUE_PAGE);
    let fired = 0;
    for (const schedule of due) {
      if (this.stopped) return;
      await this.fire(schedule).then(
        () => fired++,
        (error: unknown) => this.options.onError(error, 'claiming a due run', schedule.id),
      );
    }
    // More may be due than one page: looked at again at once, unless none of this page could be claimed.
    if (due.length === DUE_PAGE && fired > 0) this.again = true;
  }

  /** Claims the schedule's due run (skipping the times missed beyond catch-up), then starts it. */
  private async fire(schedule: StoredSchedule): Promise<void> {
    const { records, now, catchUpMs, instanceId } = this.options;
    const first = schedule.nextDueMs!;
    const at = now();
    const { latest, count, next } = dueThrough(schedule, first, at);
    const runs: ScheduleRun[] = [];
    let claim: ScheduleRun | undefined;
    let skipped = count;
    if (at - latest <= catchUpMs) {
      skipped = count - 1;
      claim = {
        scheduleId: schedule.id,
        dueMs: latest,
        state: 'claimed',
        instanceId,
        taskId: randomUUID(),
        claimedMs: at,
        missed: 1,
      };
    }
    if (skipped > 0)
      runs.push({ scheduleId: schedule.id, dueMs: first, state: 'skipped', claimedMs: at, missed: skipped });
    if (claim) runs.push(claim);
    if (!(await records.advance(schedule.id, first, next, runs))) return;
    if (skipped > 0) {
      this.options.onOutcome?.('skipped', skipped);
      this.options.onInfo('scheduled runs missed beyond the catch-up time were skipped', {
        schedule: schedule.id,
        missed: skipped,
        dueAt: new Date(first).toISOString(),
      });
    }
    if (!claim) return;
    this.options.onInfo('scheduled run claimed', {
      schedule: schedule.id,
      dueAt: new Date(claim.dueMs).toISOString(),
      instance: instanceId,
    });
    await this.startClaimed({ schedule: { ...schedule, nextDueMs: next }, claim, attempts: 0 });
  }

  /** Claims whose instance is gone: taken over here, then started unless their task exists already. */
  private async takeOverOrphans(): Promise<void> {
    const { records, instanceId, shared } = this.options;
    for (const orphan of await records.orphaned(instanceId, shared)) {
      if (!(await records.takeOver(orphan, instanceId))) continue;
      const claim = { ...orphan, instanceId };
      if (claim.taskId && (await records.taskExists(claim.taskId))) {
        // It began before its instance went: its task's recovery tells how it ended.
        await records.started(claim);
        continue;
      }
      const schedule = await records.get(claim.scheduleId);
      if (!schedule) continue;
      this.options.onInfo('a scheduled run claimed by an instance that stopped is started here', {
        schedule: schedule.id,
        dueAt: new Date(claim.dueMs).toISOString(),
        instance: instanceId,
        from: orphan.instanceId,
      });
      await this.startClaimed({ schedule, claim, attempts: 0 });
    }
  }

  /** Starts a claimed run; at the turn bound it waits (kept, tried again when a place frees). */
  private async startClaimed(entry: Waiting): Promise<void> {
    const { schedule, claim } = entry;
    const key = `${claim.scheduleId} ${claim.dueMs}`;
    const { records, onError, onInfo } = this.options;
    try {
      await this.launch(schedule, claim);
    } catch (error) {
      if (hasErrorCode(error, 'turns_at_limit')) {
        if (!this.waiting.has(key)) onInfo('a scheduled run waits for a turn place', { schedule: schedule.id });
        this.waiting.set(key, entry);
        return;
      }
      // Draining: the claim stays this instance's until it closes; then another takes it over.
      if (hasErrorCode(error, 'instance_draining')) return void this.waiting.delete(key);
      entry.attempts++;
      if (entry.attempts < MAX_ATTEMPTS && !hasErrorCode(error, 'task_not_found')) {
        this.waiting.set(key, entry);
        return;
      }
      this.waiting.delete(key);
      onError(error, 'starting a scheduled run (given up)', schedule.id);
      await records.started(claim);
      this.options.onOutcome?.('not_started', 1);
      return;
    }
    this.waiting.delete(key);
  }

  /**
   * Starts a claimed run's turn, as a trace of its own, and counts its outcome when it ends: a
   * due run's, and a hook's (`hook-triggers.ts`). Throws what `startTurn` throws, the claim kept.
   */
  async launch(schedule: StoredSchedule, claim: ScheduleRun): Promise<StartedRun> {
    const { runs } = this.options;
    const started = await traceScheduledRun(schedule.id, claim.dueMs, () => runs.start(schedule, claim));
    const counted = this.countOutcome(claim, started).finally(() => this.runsUnderWay.delete(counted));
    this.runsUnderWay.add(counted);
    return started;
  }

  private async countOutcome(claim: ScheduleRun, started: StartedRun): Promise<void> {
    const { records, stateOf, onError } = this.options;
    try {
      await records.started(claim);
      await started.done;
      const state = await stateOf(started.taskId, started.context);
      this.options.onOutcome?.(outcomeOf(state), 1);
    } catch (error) {
      onError(error, 'recording a scheduled run', claim.scheduleId);
    }
  }
}

function outcomeOf(state: TaskState | undefined): RunOutcome {
  switch (state) {
    case TaskState.TASK_STATE_COMPLETED:
      return 'completed';
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return 'input_required';
    case TaskState.TASK_STATE_CANCELED:
      return 'canceled';
    case TaskState.TASK_STATE_REJECTED:
      return 'rejected';
    default:
      return 'failed';
  }
}
