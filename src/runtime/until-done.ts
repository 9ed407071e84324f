import { hasErrorCode } from '../errors.js';

/** Waits before trying again, longer after each failure in a row. */
const RETRY_DELAYS_MS = [50, 200, 1000, 5000];

/**
 * Runs `write`, a write that a turn's end cannot do without, until it succeeds, telling
 * `onError` of each failure: a lost database connection is replaced by the next statement's,
 * so a second try normally succeeds at once, and a database that restarts takes longer. Gives
 * up, throwing the failure, once `stop()` says so (the instance is stopping) or the task is gone.
 */
export async function untilDone<T>(
  write: () => Promise<T>,
  options: { stop: () => boolean; onError: (error: unknown) => void },
): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await write();
    } catch (error) {
      if (options.stop() || hasErrorCode(error, 'task_not_found')) throw error;
      options.onError(error);
      const wait = RETRY_DELAYS_MS[Math.min(failures, RETRY_DELAYS_MS.length - 1)];
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
