import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import { KeyedSerialQueue } from './keyed-serial-queue.js';
import { isWholeBatch, readLogAfter, storedGeneration } from './task-log.js';
import type { LoggedEvent } from '../ports.js';

/**
 * The readers of task logs on this instance. A reader (a turn's stream, a subscription, a
 * cancel waiting for a turn's end) `follow`s a task and is handed each event committed after
 * that, once, in generation order, whoever wrote it.
 *
 * Events written here are handed over as their write commits (`committed`), with no read. Alone
 * (SQLite) that is all there is. Shared (PostgreSQL), other instances write too: a wake-up
 * (`wake`, from their `NOTIFY`) or an event written here that skips a generation makes the feed
 * read the log after the last generation it handed out. Reads and hand-overs of one task go one
 * after another, so nothing is handed out twice or out of order.
 */
export class TaskFeeds {
  private readonly feeds = new Map<string, Feed>();
  /** Each task's reads, one after another. */
  private readonly steps = new KeyedSerialQueue();

  constructor(
    /** Shared: the database to read other instances' events from; none alone. */
    private readonly db: Kysely<Database> | undefined,
    private readonly onError: (error: unknown, what: string) => void,
  ) {}

  /**
   * Follows the task: resolves once every event committed from then on will be handed to the
   * returned subscription (events committed before may be too: a reader skips those its
   * snapshot of the task holds, by generation). `known`: a generation of the task the caller
   * read already (0 for a task not stored yet), where a new feed starts without reading it.
   */
  async follow(taskId: string, known?: number): Promise<LogSubscription> {
    let feed = this.feeds.get(taskId);
    if (!feed) {
      feed = { position: this.db ? known : undefined, readers: new Set(), readQueued: false, starting: undefined };
      this.feeds.set(taskId, feed);
      if (this.db && known === undefined) {
        const db = this.db;
        const started = feed;
        started.starting = this.steps
          .run(taskId, async () => {
            started.position ??= (await storedGeneration(db, taskId)) ?? 0;
          })
          .finally(() => (started.starting = undefined));
      }
    }
    const joined = feed;
    const reader = new LogSubscription(() => {
      joined.readers.delete(reader);
      if (joined.readers.size === 0 && this.feeds.get(taskId) === joined) this.feeds.delete(taskId);
    });
    feed.readers.add(reader);
    try {
      await feed.starting;
    } catch (error) {
      reader.close();
      throw error;
    }
    return reader;
  }

  /** Events written here, committed, in generation order (`TaskImages`'s `onLogged`). */
  committed(taskId: string, logged: readonly LoggedEvent[]): void {
    const feed = this.feeds.get(taskId);
    if (!feed || logged.length === 0) return;
    if (!this.db) return this.handOut(feed, logged);
    // Next in line: handed out now. Otherwise another instance's events come first: read them all.
    if (!feed.starting && !feed.readQueued && feed.position === logged[0]!.generation - 1)
      return this.handOut(feed, logged);
    this.wake(taskId, logged.at(-1)!.generation);
  }

  /** Another instance wrote the task's events up to `generation` (shared). */
  wake(taskId: string, generation?: number): void {
    const feed = this.feeds.get(taskId);
    if (!feed || !this.db || feed.readQueued) return;
    if (generation !== undefined && feed.position !== undefined && generation <= feed.position) return;
    feed.readQueued = true;
    void this.steps.run(taskId, async () => {
      feed.readQueued = false;
      try {
        await this.readNew(taskId, feed);
      } catch (error) {
        this.onError(error, `reading the events of task ${taskId}`);
      }
    });
  }

  /** Reads every followed task's log again: wake-ups may have been lost (the LISTEN connection dropped). */
  wakeAll(): void {
    for (const taskId of this.feeds.keys()) this.wake(taskId);
  }

  /** Resolves once the reads under way have ended. */
  async settled(): Promise<void> {
    await this.steps.settled();
  }

  private async readNew(taskId: string, feed: Feed): Promise<void> {
    for (;;) {
      if (feed.readers.size === 0) return;
      const read = await readLogAfter(this.db!, taskId, feed.position ?? 0);
      this.handOut(feed, read);
      if (!isWholeBatch(read)) return;
    }
  }

  private handOut(feed: Feed, logged: readonly LoggedEvent[]): void {
    for (const entry of logged) {
      if (feed.position !== undefined && entry.generation <= feed.position) continue;
      feed.position = entry.generation;
      for (const reader of feed.readers) reader.push(entry);
    }
  }
}

interface Feed {
  /** The last generation handed out (shared: read from the task when the feed began). */
  position: number | undefined;
  readers: Set<LogSubscription>;
  readQueued: boolean;
  /** Shared: the read of the task's generation, under way. */
  starting: Promise<void> | undefined;
}

/**
 * One reader's events of a task, in generation order, kept until read: a reader that is slow
 * holds its own backlog, not the writer's. `close` ends it; a reader reading then is told so.
 */
export class LogSubscription {
  private readonly waiting: LoggedEvent[] = [];
  private wakeReader: (() => void) | undefined;
  private closed = false;
  private failure: { error: unknown } | undefined;
  private readonly closeListeners: (() => void)[] = [];

  constructor(private readonly onClose: () => void) {}

  /** Told once when it closes, by whoever keeps a list of open readers (a drain's). */
  onClosed(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  push(entry: LoggedEvent): void {
    if (this.closed) return;
    this.waiting.push(entry);
    this.wakeReader?.();
  }

  /** The next event, or undefined once closed; after the events waiting, the error it `fail`ed with. */
  async next(): Promise<LoggedEvent | undefined> {
    while (this.waiting.length === 0) {
      if (this.failure) throw this.failure.error;
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => (this.wakeReader = resolve));
      this.wakeReader = undefined;
    }
    return this.waiting.shift();
  }

  /** Ends the events with `error`, once those waiting are read: what its reader waited for will not come. */
  fail(error: unknown): void {
    this.failure ??= { error };
    this.wakeReader?.();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.waiting.length = 0;
    this.onClose();
    this.wakeReader?.();
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}
