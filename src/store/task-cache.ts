import type { LRUCache } from 'lru-cache';
import { byteBoundedCache } from './byte-bounded-cache.js';
import type { StoredTask } from './stored-task.js';

/**
 * The store's in-memory task images: the bounded cache that holds them, under the keys that
 * also name each task's turn in the per-task queue (`keyed-serial-queue.ts`) under which they
 * are read and changed.
 */

/** Who may see a task: the SDK's tenant and owner, as `InMemoryTaskStore` scopes them. */
export interface TaskScope {
  tenant: string;
  owner: string;
}

/**
 * The key of a task in its scope, for the cache and the per-task queue. Lengths go first so
 * no tenant, owner or id can make two scopes' keys meet.
 */
export function scopedKey(scope: TaskScope, taskId: string): string {
  return `${scope.tenant.length}:${scope.tenant}${scope.owner.length}:${scope.owner}${taskId}`;
}

/**
 * The task images kept in memory, least recently used dropped first, so that the load and
 * save around every event cost a lookup instead of reading and parsing the task's whole
 * history again. Bounded by the images' estimated bytes (`StoredTask.bytes`); a task heavier
 * than the whole bound is read from the database on each use instead.
 *
 * Images are kept under their scope (tenant, owner and id) and found only by a caller of that
 * scope: another user's task id misses here exactly like an id never stored, and both then
 * cost the same database read, which finds nothing in the caller's scope. A cache keyed by id
 * alone answered "not yours" from memory, measurably faster than "no such task".
 *
 * The cache may only hold images that match the database: the store puts an image here
 * after reading it or after a save committed, and drops it when a write fails. When other
 * processes write the same database, each image carries its row's version and is checked
 * against it before use (`task-images.ts`).
 */
export class TaskCache {
  private readonly images: LRUCache<string, StoredTask>;

  /** @param maxBytes the most the kept images may weigh together; 0 disables caching. */
  constructor(readonly maxBytes: number) {
    this.images = byteBoundedCache(maxBytes, (image) => image.bytes);
  }

  /** How many images are kept. */
  get size(): number {
    return this.images.size;
  }

  /** What the kept images weigh together. */
  get bytes(): number {
    return this.images.calculatedSize;
  }

  /** The image, marked as the most recently used. */
  get(scope: TaskScope, taskId: string): StoredTask | undefined {
    return this.images.get(scopedKey(scope, taskId));
  }

  /** The image without changing the recency order (for `list`, which should not churn it). */
  peek(scope: TaskScope, taskId: string): StoredTask | undefined {
    return this.images.peek(scopedKey(scope, taskId));
  }

  /** Keeps the image under its own scope, weighed as it is now (call again after it changed). */
  set(image: StoredTask): void {
    this.images.set(scopedKey(image, image.task.id), image);
  }

  delete(scope: TaskScope, taskId: string): void {
    this.images.delete(scopedKey(scope, taskId));
  }

  clear(): void {
    this.images.clear();
  }
}
