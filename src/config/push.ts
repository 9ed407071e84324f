/** The `push` key of the config file: push notifications' webhooks, bounds, retries and pruning (docs/push.md). */
import { z } from 'zod';

/** Push notifications' defaults (docs/push.md). */
export const DEFAULT_PUSH_TIMEOUT_MS = 10_000;
export const DEFAULT_PUSH_RETRY_FOR_MS = 86_400_000;
export const DEFAULT_PUSH_FIRST_RETRY_MS = 1000;
export const DEFAULT_PUSH_MAX_RETRY_MS = 300_000;
/** Every event goes to every config of its task: 10 receivers an event is plenty, and bounds the fan-out. */
export const DEFAULT_PUSH_MAX_CONFIGS_PER_TASK = 10;
export const DEFAULT_PUSH_MAX_CONFIGS_PER_USER = 1000;
/** A week: long enough to notice on `/status` and look into; then a failed delivery is pruned. */
export const DEFAULT_PUSH_KEEP_FAILED_FOR_MS = 7 * 86_400_000;

const wholeMs = z.number().int('must be a whole number of milliseconds');

/** How the events of tasks are POSTed to their push-notification configs' webhooks (docs/push.md): the `push` key's fields, made a strict object by `schema.ts`. */
export const pushShape = {
  allowPrivateNetworks: z
    .boolean()
    .default(false)
    .describe(
      'Whether a webhook may be on a loopback, private, link-local or otherwise non-public address. Off, such a URL is refused when its config is created and again at delivery, after DNS. On, any client that may create a config can make the harness POST to internal services (SSRF): for tests and closed deployments only (docs/push.md).',
    ),
  timeoutMs: wholeMs
    .min(100, 'must be at least 100')
    .max(600_000)
    .default(DEFAULT_PUSH_TIMEOUT_MS)
    .describe('The longest one POST to a webhook may take, in milliseconds.'),
  retryForMs: wholeMs
    .min(0)
    .max(30 * 86_400_000)
    .default(DEFAULT_PUSH_RETRY_FOR_MS)
    .describe(
      'How long, in milliseconds, a failed delivery is retried after its first attempt (a day); then it is kept as failed, `/status` counts it and a log line says so.',
    ),
  firstRetryMs: wholeMs
    .min(1, 'must be at least 1')
    .max(3_600_000)
    .default(DEFAULT_PUSH_FIRST_RETRY_MS)
    .describe(
      'The longest wait before the first retry, in milliseconds; each next one doubles, up to `maxRetryMs`, with full jitter.',
    ),
  maxRetryMs: wholeMs
    .min(1, 'must be at least 1')
    .max(86_400_000)
    .default(DEFAULT_PUSH_MAX_RETRY_MS)
    .describe('The longest wait between two attempts, in milliseconds.'),
  maxConfigsPerTask: z
    .number()
    .int('must be a whole number of configs')
    .min(1, 'must be at least 1')
    .max(100)
    .default(DEFAULT_PUSH_MAX_CONFIGS_PER_TASK)
    .describe(
      'The most push-notification configs one task may have. Every event of the task is POSTed to each, so this bounds what one event makes the harness send; a config past it is refused (replacing one by its id is not).',
    ),
  maxConfigsPerUser: z
    .number()
    .int('must be a whole number of configs')
    .min(1, 'must be at least 1')
    .max(1_000_000)
    .default(DEFAULT_PUSH_MAX_CONFIGS_PER_USER)
    .describe(
      'The most push-notification configs one user (tenant and token) may have over all their tasks; a config past it is refused. Without tokens, every client is one user.',
    ),
  keepFailedForMs: wholeMs
    .min(0)
    .max(366 * 86_400_000, 'must be at most a year')
    .default(DEFAULT_PUSH_KEEP_FAILED_FOR_MS)
    .describe(
      'How long, in milliseconds (a week), a delivery kept as failed stays after its last attempt, for `/status` to count; then it is pruned (the metric `tiny_harness_push_deliveries_pruned_total` counts them).',
    ),
};
