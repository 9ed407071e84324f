import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import { markSeq } from '../event-seq.js';
import { decodeAgentEvent } from './event-codec.js';
import { KeyedSerialQueue } from './keyed-serial-queue.js';

/** Rows read from `task_events` by one query at most. */
const READ_BATCH = 500;

interface Follower {
  /** The task's last seq when it started following: it is handed only events above. */
  readonly start: number;
  readonly deliver: (event: AgentExecutionEvent) => void;
}

/**
 * The tasks this instance follows, each read from `task_events` in seq order from where it
 * last read. A wake-up (a notification, or the LISTEN connection coming back) queues a read;
 * reads and new followers of one task go one after another, so each event is read once, in
 * order, and handed to every follower that started before it. Events this instance published
 * are read too (to move past them) but not handed back: its own streams had them already.
 */
export class TaskEventFeeds {
  private readonly feeds = new Map<string, TaskFeed>();
  /** Each task's reads and new followers, one after another. */
  private readonly steps = new KeyedSerialQueue();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly instanceId: string,
    private readonly onError: (error: unknown, what: string) => void,
  ) {}

  async follow(taskId: string, deliver: (event: AgentExecutionEvent) => void): Promise<() => void> {
    let feed = this.feeds.get(taskId);
    if (!feed) {
      feed = new TaskFeed(this.db, taskId, this.instanceId, this.onError, this.steps);
      this.feeds.set(taskId, feed);
    }
    const joined = feed;
    const leave = () => {
      if (joined.isEmpty() && this.feeds.get(taskId) === joined) this.feeds.delete(taskId);
    };
    let follower: Follower;
    try {
      follower = await joined.add(deliver);
    } catch (error) {
      leave();
      throw error;
    }
    return () => {
      joined.remove(follower);
      leave();
    };
  }

  /** Reads the task's new events, unless its events up to `seq` are read already. */
  wake(taskId: string, seq?: number): void {
    this.feeds.get(taskId)?.wake(seq);
  }

  /**
   * Resolves once the task's events stored so far have been read and handed to its followers
   * here (at once when it has none).
   */
  readNow(taskId: string): Promise<void> {
    return this.feeds.get(taskId)?.readNow() ?? Promise.resolve();
  }

  /** Reads every followed task's new events: wake-ups may have been lost. */
  wakeAll(): void {
    for (const feed of this.feeds.values()) feed.wake();
  }

  /** Resolves once the reads under way have ended. */
  async settled(): Promise<void> {
    await this.steps.settled();
  }
}

class TaskFeed {
  private readonly followers = new Set<Follower>();
  /** The highest seq read; set by the first follower. */
  private position = 0;
  private readQueued = false;
  /** Followers whose start is being read. */
  private joining = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly taskId: string,
    private readonly instanceId: string,
    private readonly onError: (error: unknown, what: string) => void,
    private readonly steps: KeyedSerialQueue,
  ) {}

  /** Adds a follower that starts after the task's last seq now. */
  add(deliver: (event: AgentExecutionEvent) => void): Promise<Follower> {
    this.joining++;
    const added = this.steps.run(this.taskId, async () => {
      const row = await this.db
        .selectFrom('task_event_seqs')
        .select('last_seq')
        .where('task_id', '=', this.taskId)
        .executeTakeFirst();
      const follower = { start: Number(row?.last_seq ?? 0), deliver };
      // Reads are queued behind this, so nothing above `position` has been handed out yet.
      if (this.followers.size === 0) this.position = follower.start;
      this.followers.add(follower);
      return follower;
    });
    return added.finally(() => this.joining--);
  }

  remove(follower: Follower): void {
    this.followers.delete(follower);
  }

  /** No follower, and none joining: the feed can go. */
  isEmpty(): boolean {
    return this.followers.size === 0 && this.joining === 0;
  }

  wake(seq?: number): void {
    if (this.readQueued || (seq !== undefined && this.followers.size > 0 && seq <= this.position)) return;
    this.readQueued = true;
    void this.steps.run(this.taskId, async () => {
      this.readQueued = false;
      try {
        await this.readNew();
      } catch (error) {
        this.onError(error, `reading the events of task ${this.taskId}`);
      }
    });
  }

  /** Reads what is stored now, after any read queued, and resolves when it is handed out. */
  readNow(): Promise<void> {
    return this.steps
      .run(this.taskId, () => this.readNew())
      .catch((error: unknown) => this.onError(error, `reading the events of task ${this.taskId}`));
  }

  private async readNew(): Promise<void> {
    for (;;) {
      if (this.followers.size === 0) return;
      const rows = await this.db
        .selectFrom('task_events')
        .select(['seq', 'origin', 'event_json'])
        .where('task_id', '=', this.taskId)
        .where('seq', '>', this.position)
        .orderBy('seq')
        .limit(READ_BATCH)
        .execute();
      for (const row of rows) {
        const seq = Number(row.seq);
        this.position = seq;
        if (row.origin !== this.instanceId) this.hand(seq, row.event_json);
      }
      if (rows.length < READ_BATCH) return;
    }
  }

  private hand(seq: number, json: string): void {
    let event: AgentExecutionEvent;
    try {
      // Marked, so that a follower that read the task after the event was stored skips it.
      event = markSeq(decodeAgentEvent(json), seq);
    } catch (error) {
      this.onError(error, `decoding event ${seq} of task ${this.taskId}`);
      return;
    }
    for (const follower of this.followers) {
      if (seq <= follower.start) continue;
      try {
        follower.deliver(event);
      } catch (error) {
        this.onError(error, `delivering an event of task ${this.taskId}`);
      }
    }
  }
}
