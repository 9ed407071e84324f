import { randomUUID } from 'node:crypto';
import type { Coordination, TurnEnding } from '../ports.js';

/**
 * The coordination of one process alone (the embedded SQLite store): turn and push leases are
 * sets in memory, and there is no other instance to carry events or cancel requests to, nor one that
 * can die and leave its turns behind. A restart loses the leases with the turns they held, and
 * start-up recovery finds those turns in the store.
 */
export class LocalCoordination implements Coordination {
  readonly settleMs = 0;
  private readonly leases = new Set<string>();
  /** The (task, config) pairs whose push notifications are being delivered, as `task config`. */
  private readonly pushLeases = new Set<string>();
  private lastEpoch = 0;
  private cancelHandler: ((taskId: string, how: TurnEnding) => void) | undefined;

  constructor(
    readonly instanceId: string = randomUUID(),
    /** Whether messages wait in the task's queue (the store's); none: no queues. */
    private readonly queued: (taskId: string) => Promise<boolean> = () => Promise.resolve(false),
  ) {}

  /** Epochs are only counted: no other writer can take a task from this process, so nothing checks them. */
  async acquireTurn(taskId: string, { unlessQueued = false } = {}): Promise<number | undefined> {
    // The queue asked first: the lease is looked at after its answer, for a turn may take it meanwhile.
    if (unlessQueued && !this.leases.has(taskId) && (await this.queued(taskId))) return undefined;
    if (this.leases.has(taskId)) return undefined;
    this.leases.add(taskId);
    return ++this.lastEpoch;
  }

  releaseTurn(taskId: string): Promise<boolean | undefined> {
    this.leases.delete(taskId);
    return this.queued(taskId);
  }

  turnHeld(taskId: string): Promise<boolean> {
    return Promise.resolve(this.leases.has(taskId));
  }

  acquirePush(taskId: string, configId: string): Promise<boolean> {
    const pair = `${taskId} ${configId}`;
    if (this.pushLeases.has(pair)) return Promise.resolve(false);
    this.pushLeases.add(pair);
    return Promise.resolve(true);
  }

  releasePush(taskId: string, configId: string): Promise<void> {
    this.pushLeases.delete(`${taskId} ${configId}`);
    return Promise.resolve();
  }

  requestCancel(taskId: string, how: TurnEnding = 'cancel'): Promise<void> {
    this.cancelHandler?.(taskId, how);
    return Promise.resolve();
  }

  onCancelRequest(handler: (taskId: string, how: TurnEnding) => void): void {
    this.cancelHandler = handler;
  }

  /** No other instance can run the queue: it waits in the store for the next start. */
  offerQueue(_taskId: string): Promise<void> {
    return Promise.resolve();
  }

  onQueueOffered(_handler: (taskId: string) => void): void {}

  /** No other instance can leave turns behind here. */
  onOrphanedTurns(_handler: (taskIds: string[]) => Promise<void>): void {}

  close(): Promise<void> {
    return Promise.resolve();
  }
}
