import type { StoredTask } from './stored-task.js';

/**
 * The two things that keep the store's in-memory task images right: the bounded cache that
 * holds them and the per-task lock under which they are read and changed.
 */

/**
 * A bounded, least-recently-used map of task images, so that the load and save around every
 * event cost a lookup instead of reading and parsing the task's whole history again.
 *
 * The cache may only hold images that match the database: the store puts an image here
 * after reading it or after a save committed, and drops it when a write fails. It assumes one
 * process writes the database file; a second writer process would leave images here stale.
 */
export class TaskCache {
  private readonly entries = new Map<string, StoredTask>();

  /** @param capacity how many tasks to keep; 0 disables caching. */
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`cache size must be a whole number >= 0, not ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The image, marked as the most recently used. */
  get(taskId: string): StoredTask | undefined {
    const entry = this.entries.get(taskId);
    if (entry) {
      this.entries.delete(taskId);
      this.entries.set(taskId, entry);
    }
    return entry;
  }

  /** The image without changing the recency order (for `list`, which should not churn it). */
  peek(taskId: string): StoredTask | undefined {
    return this.entries.get(taskId);
  }

  set(taskId: string, entry: StoredTask): void {
    if (this.capacity === 0) return;
    this.entries.delete(taskId);
    this.entries.set(taskId, entry);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  delete(taskId: string): void {
    this.entries.delete(taskId);
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * Runs work for one key at a time, in call order. The store reads an image, plans a save
 * against it and commits under the task's key, so two saves of the same task (a running turn
 * and a command, which the SDK's own per-task lock does not always cover) never plan against
 * the same image, and a read that missed the cache cannot put back an image a save outdated.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
