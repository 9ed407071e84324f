/**
 * Runs work one at a time per key, in call order; work of different keys runs concurrently.
 * The store serializes by task: the reads and saves of one task's image, the hand-on of its
 * events, the reads of its event feed. A key is forgotten once its last work has settled, so
 * the queue holds only the keys with work queued or running.
 */
export class KeyedSerialQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Runs `work` once every work queued before under `key` has settled, failed or not; resolves
   * or rejects as `work` does. A failure is its caller's alone: the next work runs anyway.
   */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(work);
    const tail = result.then(ignore, ignore);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** The keys with work queued or running. */
  keys(): string[] {
    return [...this.tails.keys()];
  }

  /** Resolves once the work queued so far, under every key, has settled. */
  async settled(): Promise<void> {
    await Promise.all(this.tails.values());
  }
}

function ignore(): void {}
