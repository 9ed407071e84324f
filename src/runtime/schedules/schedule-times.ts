/**
 * When a schedule is due (issue 39): its `<when>` read into a kind and a spec, and its due times
 * computed, by croner for cron expressions and instants (with their time zones); an interval
 * (`every 2h`) is a fixed step from the schedule's creation, as a timer's is.
 */
import { Cron } from 'croner';
import type { StoredSchedule } from '../../schedule-ports.js';

/** No schedule runs more often than this: one minute (issue 39). */
export const MIN_INTERVAL_MS = 60_000;

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** How a `<when>` reads, or why it cannot be read (a sentence for the user). */
export type ReadWhen = { kind: StoredSchedule['kind']; spec: string } | { problem: string };

export type ScheduleTimes = Pick<StoredSchedule, 'kind' | 'spec' | 'timeZone' | 'createdMs'>;

/**
 * Reads `<when>`: a cron expression (five fields, six with seconds, or `@daily` and the like),
 * `every <n><m|h|d>`, or `at <date and time>` (an ISO 8601 local time in the schedule's zone, or
 * with its own offset). Checked against the zone and the one-minute floor.
 */
export function readWhen(when: string, timeZone: string, nowMs: number): ReadWhen {
  if (!isTimeZone(timeZone))
    return { problem: `"${timeZone}" is not a time zone: name one such as Europe/Paris or UTC.` };
  const every = /^every\s+(\d{1,6})\s*(m|min|h|d)$/i.exec(when);
  if (/^every\b/i.test(when)) {
    if (!every) return { problem: `"${when}" is not an interval: write it as every 30m, every 2h or every 1d.` };
    const ms = Number(every[1]) * UNIT_MS[every[2]!.toLowerCase().charAt(0)]!;
    if (ms < MIN_INTERVAL_MS) return { problem: 'A schedule runs at most once a minute: every 1m is the shortest.' };
    return { kind: 'every', spec: String(ms) };
  }
  const at = /^at\s+(\S+)$/i.exec(when);
  if (/^at\b/i.test(when)) {
    if (!at || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(at[1]!))
      return { problem: `"${when}" is not a time: write it as at 2026-12-24T17:00 (in the schedule's time zone).` };
    const cron = cronOf(at[1]!, timeZone);
    if ('problem' in cron) return cron;
    const next = cron.nextRun(new Date(nowMs));
    if (!next) return { problem: `${at[1]} has passed: give a time still to come.` };
    return { kind: 'at', spec: at[1]! };
  }
  const cron = cronOf(when, timeZone);
  if ('problem' in cron) return cron;
  const runs = cron.nextRuns(5, new Date(nowMs));
  if (runs.length === 0) return { problem: `"${when}" never comes due.` };
  for (let i = 1; i < runs.length; i++)
    if (runs[i]!.getTime() - runs[i - 1]!.getTime() < MIN_INTERVAL_MS)
      return { problem: `"${when}" runs more often than once a minute, the most a schedule may.` };
  return { kind: 'cron', spec: when };
}

/** The schedule's first due time after `afterMs`; undefined when none is left (an `at` that has passed, a hook). */
export function nextDue(schedule: ScheduleTimes, afterMs: number): number | undefined {
  // A hook is never due: a POST to its URL runs it.
  if (schedule.kind === 'hook') return undefined;
  if (schedule.kind === 'every') {
    const step = Number(schedule.spec);
    const steps = Math.floor((afterMs - schedule.createdMs) / step) + 1;
    return schedule.createdMs + Math.max(1, steps) * step;
  }
  const cron = cronOf(schedule.spec, schedule.timeZone);
  if ('problem' in cron) return undefined;
  return cron.nextRun(new Date(afterMs))?.getTime();
}

/** The schedule's next `count` due times after `afterMs`. */
export function nextDues(schedule: ScheduleTimes, afterMs: number, count: number): number[] {
  const dues: number[] = [];
  let from = afterMs;
  while (dues.length < count) {
    const due = nextDue(schedule, from);
    if (due === undefined) break;
    dues.push(due);
    from = due;
  }
  return dues;
}

/** What became due up to `nowMs`, from the due time `firstMs` on: the latest, how many in all (at most `cap` counted), and the next to come. */
export function dueThrough(
  schedule: ScheduleTimes,
  firstMs: number,
  nowMs: number,
  cap = 100_000,
): { latest: number; count: number; next: number | undefined } {
  if (schedule.kind === 'every') {
    const step = Number(schedule.spec);
    const more = Math.floor((nowMs - firstMs) / step);
    return { latest: firstMs + more * step, count: more + 1, next: firstMs + (more + 1) * step };
  }
  let latest = firstMs;
  let count = 1;
  let next = nextDue(schedule, firstMs);
  while (next !== undefined && next <= nowMs && count < cap) {
    latest = next;
    count++;
    next = nextDue(schedule, next);
  }
  return { latest, count, next };
}

function cronOf(pattern: string, timeZone: string): Cron | { problem: string } {
  try {
    const cron = new Cron(pattern, { timezone: timeZone, paused: true });
    // An unknown zone shows only when a time is computed.
    cron.nextRun();
    return cron;
  } catch {
    return { problem: `"${pattern}" is not a cron expression: five fields, e.g. "0 8 * * 1-5" (08:00 on weekdays).` };
  }
}

function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
}
