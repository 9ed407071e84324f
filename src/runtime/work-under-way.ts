/**
 * Writes under way (turn streams storing their events, replies being posted): what a shutdown
 * waits for, up to a grace. A write that never finishes (a database that stopped answering,
 * a row held by a paused instance) must not hold a shutdown forever: past the grace, what is
 * left is reported and abandoned, and recovery ends its turns later (`recovery.ts`).
 */
export class WorkUnderWay {
  private readonly pending = new Set<Promise<unknown>>();

  /** How many writes are under way now. */
  get size(): number {
    return this.pending.size;
  }

  /** Counts `work` as under way until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    const forget = () => this.pending.delete(work);
    work.then(forget, forget);
    return work;
  }

  /**
   * Resolves true once nothing is under way, work added meanwhile included, or false once
   * `graceMs` has passed first.
   */
  async settled(graceMs: number): Promise<boolean> {
    return within(
      (async () => {
        while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
      })(),
      graceMs,
    );
  }
}

/** Resolves true once `work` has settled, or false once `ms` has passed (Infinity: never) or `skip` fired first. */
export async function within(work: Promise<unknown>, ms: number, skip?: AbortSignal): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let skipped: (() => void) | undefined;
  const cut = new Promise<false>((resolve) => {
    if (Number.isFinite(ms)) timer = setTimeout(() => resolve(false), ms);
    skipped = () => resolve(false);
    if (skip?.aborted) skipped();
    skip?.addEventListener('abort', skipped, { once: true });
  });
  const done = work.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([done, cut]);
  } finally {
    clearTimeout(timer);
    if (skipped) skip?.removeEventListener('abort', skipped);
  }
}
