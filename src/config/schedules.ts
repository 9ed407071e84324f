/** The `schedules` key of the config file: prompts run on a schedule (issue 39, docs/schedules.md). */
import * as z from 'zod';

export const DEFAULT_SCHEDULES_MAX_PER_USER = 50;
/** Ten minutes: a restart or a short outage still runs what came due meanwhile; a long one skips it. */
export const DEFAULT_SCHEDULES_CATCH_UP_MS = 600_000;
export const DEFAULT_SCHEDULES_POLL_MS = 10_000;
/** 64 KiB: a webhook's payload or a page of text, not a file. */
export const DEFAULT_SCHEDULES_HOOK_MAX_BYTES = 65_536;
/** 24 hours, as payment APIs keep idempotency keys (`store/schedule-store.ts` keeps the same). */
export const DEFAULT_SCHEDULES_HOOK_KEY_RETENTION_MS = 86_400_000;

const wholeMs = z.number().int('must be a whole number of milliseconds');

export const schedulesSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(true)
    .describe('Whether `/schedule` and `/unschedule` are offered and due runs started on this instance.'),
  maxPerUser: z
    .number()
    .int('must be a whole number of schedules')
    .min(1, 'must be at least 1')
    .max(100_000)
    .default(DEFAULT_SCHEDULES_MAX_PER_USER)
    .describe('The most schedules one user may have; one more is refused.'),
  catchUpMs: wholeMs
    .min(0)
    .max(30 * 86_400_000)
    .default(DEFAULT_SCHEDULES_CATCH_UP_MS)
    .describe(
      'How late, in milliseconds, a due run may still start (the harness was down through its time): it runs once. Later, it is recorded as skipped, and `/schedule` shows it.',
    ),
  pollMs: wholeMs
    .min(100, 'must be at least 100')
    .max(60_000)
    .default(DEFAULT_SCHEDULES_POLL_MS)
    .describe(
      "The longest, in milliseconds, an instance waits between two looks for due runs: each wakes at the nearest due time it knows, and finds within this another instance's new schedule or a claim left by an instance that stopped.",
    ),
  hookMaxBytes: z
    .number()
    .int('must be a whole number of bytes')
    .min(1, 'must be at least 1')
    .max(16 * 1024 * 1024, 'must be at most 16 MiB (16777216)')
    .default(DEFAULT_SCHEDULES_HOOK_MAX_BYTES)
    .describe(
      "The largest body, in bytes, a POST to a hook's trigger URL (`/schedule hook`) may carry; a larger one is answered 413.",
    ),
  hookKeyRetentionMs: wholeMs
    .min(60_000, 'must be at least 60000 (a minute)')
    .max(30 * 86_400_000)
    .default(DEFAULT_SCHEDULES_HOOK_KEY_RETENTION_MS)
    .describe(
      "How long, in milliseconds (24 hours), an `Idempotency-Key` sent with a POST to a hook's trigger URL is kept: the same key POSTed again within it starts no second run and is answered with the first run's task id. Older keys are pruned.",
    ),
  timeZone: z
    .string()
    .min(1)
    .optional()
    .describe("The IANA time zone (e.g. Europe/Paris) of a schedule that names none; default: the server's own."),
});
