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
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise<false>((resolve) => {
      if (Number.isFinite(graceMs)) timer = setTimeout(() => resolve(false), graceMs);
    });
    const allSettled = (async () => {
      while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
      return true as const;
    })();
    try {
      return await Promise.race([allSettled, timeUp]);
    } finally {
      clearTimeout(timer);
    }
  }
}
