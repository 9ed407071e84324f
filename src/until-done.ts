/** Waits before trying again, longer after each failure in a row. */
export const RETRY_DELAYS_MS = [50, 200, 1000, 5000] as const;

/**
 * Runs `attempt` until it succeeds, telling `onError` of each failure it tries again after: a
 * lost database connection is replaced by the next statement's, so a second try normally
 * succeeds at once, and a database that restarts takes longer. The one retry of the harness's
 * store work: a turn's end and its lease's release (tried until done, unless the instance
 * stops), and a read whose connection failed (`postgres-database.ts`, tried through the delays
 * once). Gives up, throwing the failure, once `giveUp` says so.
 */
export async function untilDone<T>(
  attempt: () => Promise<T>,
  options: {
    /** Whether to stop at this failure, the `failures`-th in a row (1 for the first). */
    giveUp: (error: unknown, failures: number) => boolean;
    onError?: (error: unknown) => void;
  },
): Promise<T> {
  for (let failures = 1; ; failures++) {
    try {
      return await attempt();
    } catch (error) {
      if (options.giveUp(error, failures)) throw error;
      options.onError?.(error);
      const wait = RETRY_DELAYS_MS[Math.min(failures, RETRY_DELAYS_MS.length) - 1];
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
