import type { Kysely } from 'kysely';
import { HarnessError } from '../errors.js';
import type { Database } from '../store/database.js';
import { HeartbeatHistory } from './heartbeat-history.js';
import { msAgo } from './postgres-clock.js';
import { insertInstance, renewHeartbeat, staleInstances, takeOverInstance } from './turn-leases.js';

export interface InstanceLivenessOptions {
  db: Kysely<Database>;
  instanceId: string;
  /**
   * An instance whose heartbeat is older than this, counted in time the database took writes
   * (`heartbeat-history.ts`), is dead; heartbeats come three times as often.
   */
  leaseMs: number;
  /** Events older than this are pruned. */
  keepEventsMs: number;
  onError: (error: unknown, what: string) => void;
}

/**
 * This instance's heartbeat, and its share of the sweeping. Every `leaseMs / 3` it renews its
 * heartbeat, then, if that was written, looks for instances whose heartbeat is older than a
 * lease by PostgreSQL's clock, counted only in time this instance's own heartbeats show the
 * database took writes (`heartbeat-history.ts`): each one is dead (`kill -9`, a lost machine),
 * while a stall of the database, which holds back every heartbeat alike, kills nobody. The
 * survivor that takes a dead instance's row (`takeOverInstance`) hands its turns to the
 * orphaned-turns handler, once. It also prunes old events. One timer, one tick at a time: a slow
 * database delays the next tick rather than piling ticks up, and three ticks fit in a lease.
 */
export class InstanceLiveness {
  private timer: NodeJS.Timeout | undefined;
  private tick: Promise<void> = Promise.resolve();
  private orphanHandler: ((taskIds: string[]) => Promise<void>) | undefined;
  private readonly handling = new Set<Promise<void>>();
  private stopped = false;
  private readonly intervalMs: number;
  private readonly history: HeartbeatHistory;

  constructor(private readonly options: InstanceLivenessOptions) {
    this.intervalMs = options.leaseMs / 3;
    this.history = new HeartbeatHistory(options.leaseMs, this.intervalMs);
  }

  /** Registers this instance as alive and starts the ticks. */
  async start(): Promise<void> {
    this.history.written(await insertInstance(this.options.db, this.options.instanceId));
    this.schedule();
  }

  /**
   * Registers this instance again after another took it for dead (it was paused past its lease):
   * the heartbeats from before the gap say nothing of the database's time since. Resolves once
   * its row is back, whoever wrote it (a heartbeat may do so at the same moment).
   */
  async rejoin(): Promise<void> {
    this.history.written(await this.register());
  }

  private async register(): Promise<number> {
    this.history.forget();
    return insertInstance(this.options.db, this.options.instanceId, { ifMissing: true });
  }

  /** Sweeping waits for a handler: a dead instance's turns taken with nobody to end them would stay in flight. */
  onOrphanedTurns(handler: (taskIds: string[]) => Promise<void>): void {
    this.orphanHandler = handler;
  }

  /** Stops the ticks; resolves once the tick under way and the handler calls it made have ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.tick;
    await Promise.all(this.handling);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tick = this.beat().finally(() => this.schedule());
    }, this.intervalMs);
    // The ticks alone never keep the process running: close() ends them, and a process that
    // exits without it is what the other instances' sweeps are for.
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    const { db, instanceId, leaseMs, keepEventsMs, onError } = this.options;
    let written = false;
    try {
      let beat = await renewHeartbeat(db, instanceId);
      if (beat === undefined) {
        onError(
          new HarnessError(
            'store_failed',
            `This instance missed its heartbeats for longer than the lease (${leaseMs} ms); another instance took its turns.`,
          ),
          'heartbeat',
        );
        beat = await this.register();
      }
      this.history.written(beat);
      written = true;
    } catch (error) {
      onError(error, 'heartbeat');
    }
    // Without a heartbeat just written, this instance cannot tell a dead instance from a stalled database.
    if (written) {
      try {
        await this.sweep();
      } catch (error) {
        onError(error, 'sweeping dead instances');
      }
    }
    try {
      await db.deleteFrom('task_events').where('created_ms', '<', msAgo(keepEventsMs)).execute();
    } catch (error) {
      onError(error, 'pruning old task events');
    }
  }

  private async sweep(): Promise<void> {
    const handler = this.orphanHandler;
    const deadBefore = this.history.deadBefore();
    if (!handler || deadBefore === undefined) return;
    const { db, instanceId, onError } = this.options;
    for (const dead of await staleInstances(db, instanceId, deadBefore)) {
      const taskIds = await takeOverInstance(db, dead, deadBefore);
      if (taskIds === undefined) continue;
      // Not awaited: a long recovery must not hold back this instance's own heartbeat.
      const handled = Promise.resolve()
        .then(() => handler(taskIds))
        .catch((error: unknown) => onError(error, `ending the turns of dead instance ${dead}`));
      this.handling.add(handled);
      void handled.finally(() => this.handling.delete(handled));
    }
  }
}
