import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { sql, type Kysely } from 'kysely';
import { HarnessError } from '../errors.js';
import { createLogger } from '../log.js';
import type { Coordination, TurnEnding } from '../runtime/coordination.js';
import type { Database } from './database.js';
import { schemaChannel } from './channels.js';
import { InstanceLiveness } from './instance-liveness.js';
import { NotificationListener } from './notification-listener.js';
import { applicationName } from './postgres-database.js';
import { TaskEventFeeds } from './task-event-feeds.js';
import type { TaskEventLog } from './task-event-log.js';
import { deleteLease, insertLease, leaseExists, removeInstance } from './turn-leases.js';

/** How long an instance may go without a heartbeat before the others take it for dead. */
export const DEFAULT_LEASE_MS = 10_000;

/**
 * How long a task's events stay in `task_events`. An event is needed until every instance
 * following its task has read it, which takes one notification's round trip, or, when an
 * instance's LISTEN connection dropped, until it reconnects (its reconnection attempts end
 * within seconds) and reads what it missed. An instance cut off from the database for longer
 * than its lease is taken for dead anyway. Minutes, and many leases, are far beyond both.
 */
function keepEventsMs(leaseMs: number): number {
  return Math.max(5 * 60_000, 30 * leaseMs);
}

export interface PostgresCoordinationOptions {
  /** The coordination's database (PostgreSQL), migrated: a pool of its own (see `ownsDb`). */
  db: Kysely<Database>;
  /**
   * The store's event log (`Store.events`): events published here are queued there and handed
   * on with the writes that store them; this instance listens on its channel.
   */
  events: TaskEventLog;
  /** The same database's URL: the LISTEN connection is opened from it, outside the pool. */
  url: string;
  /** This instance's id, unique among the instances sharing the database: the event log's. */
  instanceId: string;
  /** How long, in ms, a silent instance keeps its turns before another takes them; default 10 s. */
  leaseMs?: number;
  /** Where failures that reach no caller go (a publish, a lost connection, a handler's rejection); default the log. */
  onError?: (error: unknown, what: string) => void;
  /**
   * `db` was opened for this coordination alone, and `close()` destroys it. It should be a pool
   * of its own, not the store's (harness.ts opens one): the engine asks `turnHeld` from inside the
   * store's transactions (a reply's state is chosen under its task's row lock), and a query there
   * that waits for a connection of the pool those transactions hold waits forever once as many
   * commands run at once as the pool has connections.
   */
  ownsDb?: boolean;
}

/**
 * `Coordination` for instances sharing one PostgreSQL database, with every cross-instance piece
 * taken from PostgreSQL: a turn is a row lease (`turn-leases.ts`); a task's events are rows
 * appended in order, in the transaction that stores them, with a `pg_notify` wake-up in the
 * same statement (`task-event-log.ts`), and read back by the instances following the task (`task-event-feeds.ts`) when their
 * dedicated LISTEN connection (`notification-listener.ts`) hears it; a cancel request is a
 * notification every instance hears; dead instances are found by heartbeats judged by the
 * database's clock (`instance-liveness.ts`).
 *
 * A cancel request is a wake-up only: an instance whose LISTEN connection is down when it is
 * sent does not hear it (events, by contrast, are read back from the table after a reconnect).
 *
 * Notification channels are named after the schema (`channels.ts`).
 *
 * Call `start()` before anything else, and `close()` before the store's database closes.
 */
export class PostgresCoordination implements Coordination {
  readonly instanceId: string;
  readonly settleMs: number;

  private readonly db: Kysely<Database>;
  private readonly ownsDb: boolean;
  private readonly url: string;
  private readonly onError: (error: unknown, what: string) => void;
  private readonly liveness: InstanceLiveness;
  private readonly feeds: TaskEventFeeds;
  private readonly events: TaskEventLog;
  private running = false;
  private listener: NotificationListener | undefined;
  private cancelChannel = '';
  private cancelHandler: ((taskId: string, how: TurnEnding) => void) | undefined;
  /** Wake-ups to send, the highest seq per task, gathered while one is being sent. */
  private readonly wakeUps = new Map<string, number>();
  private sendingWakeUps: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: PostgresCoordinationOptions) {
    const { db, url, leaseMs = DEFAULT_LEASE_MS } = options;
    if (!Number.isSafeInteger(leaseMs) || leaseMs < 3)
      throw new RangeError(`leaseMs must be a whole number of ms >= 3, not ${leaseMs}`);
    this.instanceId = options.instanceId;
    this.events = options.events;
    this.events.onCommitted((taskId, lastSeq) => this.wakeOthers(taskId, lastSeq));
    this.db = db;
    this.ownsDb = options.ownsDb ?? false;
    this.url = url;
    this.settleMs = leaseMs;
    const log = createLogger();
    this.onError = options.onError ?? ((error, what) => log.error(`coordination: ${what}`, { error }));
    this.liveness = new InstanceLiveness({
      db,
      instanceId: this.instanceId,
      leaseMs,
      keepEventsMs: keepEventsMs(leaseMs),
      onError: this.onError,
    });
    this.feeds = new TaskEventFeeds(db, this.instanceId, this.onError);
  }

  /** Listens for wake-ups and cancel requests, then registers this instance as alive. */
  async start(): Promise<void> {
    const eventsChannel = this.events.channel;
    this.cancelChannel = await schemaChannel(this.db, 'cancel');
    this.listener = new NotificationListener({
      url: this.url,
      applicationName: applicationName(this.instanceId),
      channels: [eventsChannel, this.cancelChannel],
      onNotification: (channel, payload) =>
        channel === eventsChannel ? this.wake(payload) : this.cancelRequested(payload),
      onReconnect: () => this.feeds.wakeAll(),
      onError: this.onError,
    });
    await this.listener.start();
    try {
      await this.liveness.start();
    } catch (error) {
      await this.listener.close();
      throw error;
    }
    this.running = true;
  }

  acquireTurn(taskId: string): Promise<number | undefined> {
    return insertLease(this.db, taskId, this.instanceId);
  }

  releaseTurn(taskId: string): Promise<void> {
    return deleteLease(this.db, taskId, this.instanceId);
  }

  turnHeld(taskId: string): Promise<boolean> {
    return leaseExists(this.db, taskId);
  }

  publish(taskId: string, event: AgentExecutionEvent): void {
    if (this.closing || !this.running) {
      this.onError(
        new HarnessError('store_failed', 'An event was published on a coordination that is not running.'),
        `publishing an event of task ${taskId}`,
      );
      return;
    }
    try {
      this.events.queue(taskId, event);
    } catch (error) {
      this.onError(error, `encoding an event of task ${taskId}`);
    }
  }

  passedThrough(taskId: string): void {
    if (this.running && !this.closing) this.events.queueStored(taskId);
  }

  async handOn(taskId: string): Promise<void> {
    await this.events
      .handOnQueued(taskId)
      .catch((error: unknown) => this.onError(error, `handing on the events of task ${taskId}`));
  }

  discard(taskId: string): void {
    this.events.takeAll(taskId);
  }

  caughtUp(taskId: string): Promise<void> {
    return this.feeds.readNow(taskId);
  }

  follow(taskId: string, deliver: (event: AgentExecutionEvent) => void): Promise<() => void> {
    return this.feeds.follow(taskId, deliver);
  }

  /** The payload is the task id, after `stop:` for a stop (task ids never hold a colon). */
  async requestCancel(taskId: string, how: TurnEnding = 'cancel'): Promise<void> {
    await sql`select pg_notify(${this.cancelChannel}, ${how === 'stop' ? `stop:${taskId}` : taskId})`.execute(this.db);
  }

  onCancelRequest(handler: (taskId: string, how: TurnEnding) => void): void {
    this.cancelHandler = handler;
  }

  onOrphanedTurns(handler: (taskIds: string[]) => Promise<void>): void {
    this.liveness.onOrphanedTurns(handler);
  }

  /**
   * Hands on the events published here that no write took, stops the heartbeat, gives back this instance's
   * leases and row (no sweep is needed for an instance that closed), ends the LISTEN
   * connection, and destroys `db` when it owns it. Every step runs even when one before it
   * failed; the first failure is thrown.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    let failure: unknown;
    const step = async (run: () => Promise<unknown> | undefined) => {
      try {
        await run();
      } catch (error) {
        failure ??= error;
      }
    };
    await step(() => this.events.flush());
    await step(() => this.sendingWakeUps);
    await step(() => this.liveness.stop());
    await step(() => removeInstance(this.db, this.instanceId));
    await step(() => this.listener?.close());
    await step(() => this.feeds.settled());
    if (this.ownsDb) await step(() => this.db.destroy());
    if (failure !== undefined)
      throw new HarnessError('store_failed', 'This instance could not leave the shared database cleanly.', {
        cause: failure,
      });
  }

  /**
   * Wakes the instances following the task: "<last seq> <task id>" on the events channel. Sent
   * from this pool, whose commits do not wait for the disk, after the events' own commit; the
   * wake-ups of one moment go in one statement.
   */
  private wakeOthers(taskId: string, lastSeq: number): void {
    this.wakeUps.set(taskId, Math.max(lastSeq, this.wakeUps.get(taskId) ?? 0));
    this.sendingWakeUps ??= this.sendWakeUps();
  }

  private async sendWakeUps(): Promise<void> {
    try {
      while (this.wakeUps.size > 0) {
        const payloads = [...this.wakeUps].map(([taskId, seq]) => `${seq} ${taskId}`);
        this.wakeUps.clear();
        await sql`select pg_notify(${this.events.channel}, payload) from unnest(${payloads}::text[]) as payload`
          .execute(this.db)
          .catch((error: unknown) => this.onError(error, 'waking the other instances'));
      }
    } finally {
      this.sendingWakeUps = undefined;
    }
  }

  /** A wake-up: "<last seq> <task id>" (see `TaskEventLog`). */
  private wake(payload: string): void {
    const space = payload.indexOf(' ');
    if (space < 0) return;
    this.feeds.wake(payload.slice(space + 1), Number(payload.slice(0, space)));
  }

  private cancelRequested(payload: string): void {
    const stop = payload.startsWith('stop:');
    const taskId = stop ? payload.slice('stop:'.length) : payload;
    try {
      this.cancelHandler?.(taskId, stop ? 'stop' : 'cancel');
    } catch (error) {
      this.onError(error, `cancelling task ${taskId}`);
    }
  }
}
