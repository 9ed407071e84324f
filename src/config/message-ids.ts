/** The `messageIdRetentionMs` key of the config file: how long a handled message is remembered (CMD-34). */
import { z } from 'zod';

/** 24 h, as payment APIs keep idempotency keys (the store's own default; a test keeps the two equal). */
export const DEFAULT_MESSAGE_ID_RETENTION_MS = 24 * 60 * 60 * 1000;

export const messageIdRetentionSchema = z
  .number()
  .int('must be a whole number of milliseconds')
  .min(0)
  .max(366 * 24 * 60 * 60 * 1000, 'must be at most a year')
  .refine(
    (ms) => ms === 0 || ms >= 60_000,
    'must be 0 (none kept) or at least 60000 (a minute): retries come later than that',
  )
  .default(DEFAULT_MESSAGE_ID_RETENTION_MS)
  .describe(
    'How long, in milliseconds (24 hours by default), a handled message is remembered: the same message (id and content) sent again within it is a resend, answered with what the first went to and not run again (docs/protocol.md). Older records are pruned. 0 keeps none: every message is handled as new, for clients that reuse a message id for different messages (the A2A TCK does; docs/conformance.md).',
  );
