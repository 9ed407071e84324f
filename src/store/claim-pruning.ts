import type { SqlMessageClaimStore } from './message-claim-store.js';

export interface ClaimPruningOptions {
  claims: Pick<SqlMessageClaimStore, 'prune'>;
  /** Claims older than this are removed (CMD-34's retention time). */
  retentionMs: number;
  /** Time between passes. */
  intervalMs?: number;
  /** The most claims one pass removes; a full pass is followed by another at once. */
  batch?: number;
  onError: (error: unknown) => void;
  /** Told how many rows a pass removed, when it removed any. */
  onPruned?: (count: number) => void;
}

/** A pass a minute: a claim goes about a minute after its retention time ends. */
export const CLAIM_PRUNING_INTERVAL_MS = 60_000;
/** A pass is one short statement even after a long stop left a day of claims behind. */
export const CLAIM_PRUNING_BATCH = 1000;

/**
 * Removes message claims older than the retention time, in passes of bounded work, so the
 * record of handled messages keeps a day's worth (by default), not everything ever sent; the
 * same passes prune the task log (SQLite) and the push deliveries kept as failed. Every
 * instance sharing a database runs it; two deleting the same rows is harmless. One timer, one
 * pass at a time, never keeping the process running.
 */
export class ClaimPruning {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: ClaimPruningOptions) {}

  start(): void {
    this.schedule(this.options.intervalMs ?? CLAIM_PRUNING_INTERVAL_MS);
  }

  /** Stops the passes; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
  }

  /** One pass; resolves to whether it removed a full batch (more may be waiting). */
  async runOnce(): Promise<boolean> {
    const batch = this.options.batch ?? CLAIM_PRUNING_BATCH;
    try {
      const pruned = await this.options.claims.prune(this.options.retentionMs, batch);
      if (pruned > 0) this.options.onPruned?.(pruned);
      return pruned >= batch;
    } catch (error) {
      this.options.onError(error);
      return false;
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.pass = this.runOnce().then((more) =>
        this.schedule(more ? 0 : (this.options.intervalMs ?? CLAIM_PRUNING_INTERVAL_MS)),
      );
    }, delayMs);
    this.timer.unref();
  }
}
