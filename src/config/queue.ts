/** The `queue` key of the config file (spec/while-busy-extension-v1.md). */
import * as z from 'zod';

/** A task's queue of messages sent while a turn runs holds this many at most (spec/while-busy-extension-v1.md). */
export const DEFAULT_QUEUE_MAX_PER_TASK = 16;

/** The queues of messages sent while a turn runs (spec/while-busy-extension-v1.md). */
export const queueSchema = z.strictObject({
  maxPerTask: z
    .number()
    .int('must be a whole number of messages')
    .min(1, 'must be at least 1')
    .max(1000)
    .default(DEFAULT_QUEUE_MAX_PER_TASK)
    .describe("The most messages one task's queue holds; one more is refused (`queue_full`)."),
});
