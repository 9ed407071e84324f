import { sql, type Kysely } from 'kysely';
import { HarnessError } from '../errors.js';
import { createLogger } from '../log.js';
import type { Database } from '../store/database.js';
import { schemaChannel } from './channels.js';
import { InstanceLiveness } from './instance-liveness.js';
import { NotificationListener } from './notification-listener.js';
import { applicationName } from '../store/postgres-database.js';
import type { Store } from '../store/index.js';
import type { TaskFeeds } from '../store/task-feeds.js';
import { LOG_KEEP_MS } from '../store/task-log.js';
import { deletePushLease, insertPushLease } from './push-leases.js';
import { deleteLease, insertLease, leaseExists, removeInstance } from './turn-leases.js';
import type { Coordination, TurnEnding } from '../ports.js';

/** How long an instance may go without a heartbeat before the others take it for dead. */
export const DEFAULT_LEASE_MS = 10_000;

/**
 * How long a task's events stay in `task_events` (`LOG_KEEP_MS`), and at least many leases: an
 * instance cut off from the database for longer than its lease is taken for dead anyway.
 */
function keepEventsMs(leaseMs: number): number {
  return Math.max(LOG_KEEP_MS, 30 * leaseMs);
}

export interface PostgresCoordinationOptions {
  /** The coordination's database (PostgreSQL), migrated: a pool of its own (see `ownsDb`). */
  db: Kysely<Database>;
  /** Where the store says it logged events (`Store.events`): this instance then wakes the others on the events channel. */
  events: NonNullable<Store['events']>;
  /** The store's readers of task logs (`Store.feeds`), woken when another instance logs events. */
  feeds: TaskFeeds;
  /** The same database's URL: the LISTEN connection is opened from it, outside the pool. */
  url: string;
  /** This instance's id, unique among the instances sharing the database: the event log's. */
  instanceId: string;
  /** How long, in ms, a silent instance keeps its turns before another takes them; default 10 s. */
  leaseMs?: number;
  /** Where failures that reach no caller go (a lost connection, a wake-up not sent, a handler's rejection); default the log. */
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
 * taken from PostgreSQL: a turn is a row lease (`turn-leases.ts`), and so is a push pair's
 * delivery (`push-leases.ts`); a task's log is rows appended
 * in the transaction that stores the task (`store/task-log.ts`), after which this instance sends a
 * `pg_notify` wake-up, "task T has events up to generation N", and the instances following the
 * task read its log (`store/task-feeds.ts`) when their dedicated LISTEN connection
 * (`notification-listener.ts`) hears it; a cancel request is a notification every instance
 * hears; dead instances are found by heartbeats judged by the database's clock
 * (`instance-liveness.ts`).
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
  private readonly feeds: TaskFeeds;
  private readonly events: NonNullable<Store['events']>;
  private running = false;
  private listener: NotificationListener | undefined;
  /** The channel on which instances wake each other when they log events (`channels.ts`). */
  private eventsChannel = '';
  private cancelChannel = '';
  private cancelHandler: ((taskId: string, how: TurnEnding) => void) | undefined;
  private queueChannel = '';
  private queueHandler: ((taskId: string) => void) | undefined;
  /** Wake-ups to send, the highest generation per task, gathered while one is being sent. */
  private readonly wakeUps = new Map<string, number>();
  private sendingWakeUps: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: PostgresCoordinationOptions) {
    const { db, url, leaseMs = DEFAULT_LEASE_MS } = options;
    if (!Number.isSafeInteger(leaseMs) || leaseMs < 3)
      throw new RangeError(`leaseMs must be a whole number of ms >= 3, not ${leaseMs}`);
    this.instanceId = options.instanceId;
    this.events = options.events;
    this.events.onLogged((taskId, generation) => this.wakeOthers(taskId, generation));
    this.feeds = options.feeds;
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
  }

  /** Listens for wake-ups and cancel requests, then registers this instance as alive. */
  async start(): Promise<void> {
    const eventsChannel = (this.eventsChannel = await schemaChannel(this.db, 'events'));
    this.cancelChannel = await schemaChannel(this.db, 'cancel');
    this.queueChannel = await schemaChannel(this.db, 'queue');
    this.listener = new NotificationListener({
      url: this.url,
      applicationName: applicationName(this.instanceId),
      channels: [eventsChannel, this.cancelChannel, this.queueChannel],
      onNotification: (channel, payload) => {
        if (channel === eventsChannel) this.wake(payload);
        else if (channel === this.queueChannel) this.queueOffered(payload);
        else this.cancelRequested(payload);
      },
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

  async acquireTurn(taskId: string, options: { unlessQueued?: boolean } = {}): Promise<number | undefined> {
    try {
      return await insertLease(this.db, taskId, this.instanceId, options);
    } catch (error) {
      // Taken for dead while paused, this instance has no row until its next heartbeat: it
      // registers again at once, as that heartbeat would, rather than fail the request.
      if (!isMissingInstance(error)) throw error;
      await this.liveness.rejoin();
      return insertLease(this.db, taskId, this.instanceId, options);
    }
  }

  releaseTurn(taskId: string): Promise<boolean | undefined> {
    return deleteLease(this.db, taskId, this.instanceId);
  }

  turnHeld(taskId: string): Promise<boolean> {
    return leaseExists(this.db, taskId);
  }

  async acquirePush(taskId: string, configId: string): Promise<boolean> {
    try {
      return await insertPushLease(this.db, taskId, configId, this.instanceId);
    } catch (error) {
      // As for a turn's lease: taken for dead while paused, this instance registers again at once.
      if (!isMissingInstance(error)) throw error;
      await this.liveness.rejoin();
      return insertPushLease(this.db, taskId, configId, this.instanceId);
    }
  }

  releasePush(taskId: string, configId: string): Promise<void> {
    return deletePushLease(this.db, taskId, configId, this.instanceId);
  }

  /** The payload is the task id, after `stop:` for a stop (task ids never hold a colon). */
  async requestCancel(taskId: string, how: TurnEnding = 'cancel'): Promise<void> {
    await sql`select pg_notify(${this.cancelChannel}, ${how === 'stop' ? `stop:${taskId}` : taskId})`.execute(this.db);
  }

  onCancelRequest(handler: (taskId: string, how: TurnEnding) => void): void {
    this.cancelHandler = handler;
  }

  /** The payload is "<this instance's id> <task id>": the instance offering it does not take it. */
  async offerQueue(taskId: string): Promise<void> {
    await sql`select pg_notify(${this.queueChannel}, ${`${this.instanceId} ${taskId}`})`.execute(this.db);
  }

  onQueueOffered(handler: (taskId: string) => void): void {
    this.queueHandler = handler;
  }

  onOrphanedTurns(handler: (taskIds: string[]) => Promise<void>): void {
    this.liveness.onOrphanedTurns(handler);
  }

  /**
   * Sends the wake-ups due, stops the heartbeat, gives back this instance's
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
   * Wakes the instances following the task: "<generation> <task id>" on the events channel.
   * Sent from this pool, whose commits do not wait for the disk, after the events' own commit
   * (a transaction that notifies holds a lock every other notifying commit waits for, through
   * its flush to the disk); the wake-ups of one moment go in one statement.
   */
  private wakeOthers(taskId: string, generation: number): void {
    if (!this.running || this.closing) return;
    this.wakeUps.set(taskId, Math.max(generation, this.wakeUps.get(taskId) ?? 0));
    this.sendingWakeUps ??= this.sendWakeUps();
  }

  private async sendWakeUps(): Promise<void> {
    try {
      while (this.wakeUps.size > 0) {
        const payloads = [...this.wakeUps].map(([taskId, generation]) => `${generation} ${taskId}`);
        this.wakeUps.clear();
        await sql`select pg_notify(${this.eventsChannel}, payload) from unnest(${payloads}::text[]) as payload`
          .execute(this.db)
          .catch((error: unknown) => this.onError(error, 'waking the other instances'));
      }
    } finally {
      this.sendingWakeUps = undefined;
    }
  }

  /** A wake-up: "<generation> <task id>". */
  private wake(payload: string): void {
    const space = payload.indexOf(' ');
    if (space < 0) return;
    this.feeds.wake(payload.slice(space + 1), Number(payload.slice(0, space)));
  }

  private queueOffered(payload: string): void {
    const space = payload.indexOf(' ');
    if (space < 0 || payload.slice(0, space) === this.instanceId) return;
    try {
      this.queueHandler?.(payload.slice(space + 1));
    } catch (error) {
      this.onError(error, `running the queue of task ${payload.slice(space + 1)}`);
    }
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

/** A lease's insert refused because this instance's row is gone (another instance took it for dead). */
function isMissingInstance(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return (
    code === '23503' && (constraint === 'turn_leases_instance_id_fkey' || constraint === 'push_leases_instance_id_fkey')
  );
}
