import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { sql, type Kysely, type Transaction } from 'kysely';
import { markSeq } from '../event-seq.js';
import type { Database } from './database.js';
import { encodeAgentEvent } from './event-codec.js';
import { KeyedSerialQueue } from './keyed-serial-queue.js';
import { nowMs } from './postgres-clock.js';

/** Events appended by one statement at most, so one statement stays a bounded size. */
const MAX_BATCH = 100;

/** An event to hand on, with its text: encoded when it was published, as it was then. */
export interface EncodedEvent {
  event: AgentExecutionEvent;
  json: string;
}

export function encoded(event: AgentExecutionEvent): EncodedEvent {
  return { event, json: encodeAgentEvent(event) };
}

/** The place of an event stored already (`queueStored`). */
const STORED: EncodedEvent = { event: { kind: 'message', data: undefined as never }, json: '' };

/**
 * The events instances sharing PostgreSQL hand each other, appended to `task_events` in the
 * same transaction as the task row that reflects them, whose `event_seq` is set to the last of
 * them. A follower elsewhere reads the task, then takes the events after its `event_seq`: it
 * misses none and is sent none twice, whatever the timing of the two instances.
 *
 * A turn's events are published on its bus before the SDK's result manager stores them, one
 * save per event, in the order published (`TaskStore.save` in `task-store.ts` takes the next
 * one queued here into each save's transaction). Replies and notes go with the write that
 * stores them (`SqlTaskStore.modify`). What no save took (events published after the result
 * manager stopped, or when a save failed) is handed on by `handOn`, which writes the row too.
 *
 * Seqs come from the task's row in `task_event_seqs`, raised by an upsert in the same
 * statement; its row lock makes a second instance appending to the task wait until the first
 * commits, so a seq is only ever given once every seq below it is committed: a follower
 * reading "seq > n" in seq order can miss nothing. The wake-up is sent once the write has
 * committed (`committed`), and carries only "<last seq> <task id>", far below the 8,000-byte
 * cap; the events themselves are read from the table (notifications are not durable).
 */
export class TaskEventLog {
  private readonly queued = new Map<string, EncodedEvent[]>();
  /** One hand-on after another per task: two transactions under way at once could take seqs in either order. */
  private readonly handingOn = new KeyedSerialQueue();
  private wake: ((taskId: string, lastSeq: number) => void) | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly instanceId: string,
    /** The notification channel the other instances listen on. */
    readonly channel: string,
  ) {}

  /** Queues an event of a turn running here, for the save that stores it. Encoded now, as published. */
  queue(taskId: string, event: AgentExecutionEvent): void {
    const item = encoded(event);
    const queue = this.queued.get(taskId);
    if (queue) queue.push(item);
    else this.queued.set(taskId, [item]);
  }

  /**
   * Marks the place, among the turn's events, of an event stored already (a reply read back
   * from the table) that reached the turn's bus here: the result manager saves it too, and that
   * save hands nothing on.
   */
  queueStored(taskId: string): void {
    const queue = this.queued.get(taskId);
    if (queue) queue.push(STORED);
    else this.queued.set(taskId, [STORED]);
  }

  /** The next queued event of the task, taken off the queue: what the save under way stores. */
  takeNext(taskId: string): EncodedEvent | undefined {
    const queue = this.queued.get(taskId);
    const next = queue?.shift();
    if (queue?.length === 0) this.queued.delete(taskId);
    return next === STORED ? undefined : next;
  }

  /** Every queued event of the task, taken off the queue. */
  takeAll(taskId: string): EncodedEvent[] {
    const queue = this.queued.get(taskId) ?? [];
    this.queued.delete(taskId);
    return queue.filter((item) => item !== STORED);
  }

  /**
   * Hands on the task's queued events that no save took, in a transaction of their own that
   * writes the task's row with them (its `event_seq`, and its version, so that every instance
   * reads the task again before using an image of it).
   */
  handOnQueued(taskId: string): Promise<void> {
    return this.handingOn.run(taskId, async () => {
      const items = this.takeAll(taskId);
      if (items.length === 0) return;
      this.committed(taskId, await this.db.transaction().execute((trx) => this.append(trx, taskId, items, true)));
    });
  }

  /** Hands on every task's queued events (see `handOnQueued`). */
  async flush(): Promise<void> {
    await Promise.all(
      [...new Set([...this.queued.keys(), ...this.handingOn.keys()])].map((taskId) => this.handOnQueued(taskId)),
    );
  }

  /** Who wakes the other instances once events are committed (the coordination, `onCommitted`). */
  onCommitted(handler: (taskId: string, lastSeq: number) => void): void {
    this.wake = handler;
  }

  /**
   * Says that the write that appended the task's events up to `lastSeq` has committed: the
   * other instances are woken now. Not from inside the write's transaction: a transaction that
   * notifies holds a lock every other notifying commit waits for, through its flush to the disk.
   */
  committed(taskId: string, lastSeq: number | undefined): void {
    if (lastSeq !== undefined) this.wake?.(taskId, lastSeq);
  }

  /** Whether events of the task wait to be handed on. */
  hasQueued(taskId: string): boolean {
    return this.queued.has(taskId);
  }

  /**
   * Appends the events in `trx`, the transaction that writes the task's row, marks each with
   * its seq, and returns the last seq, which the row gets as its `event_seq` (`bumpVersion`:
   * this statement is the row's only write, so it adds one to its version as a save does).
   */
  async append(
    trx: Transaction<Database> | Kysely<Database>,
    taskId: string,
    events: readonly EncodedEvent[],
    bumpVersion = false,
  ): Promise<number | undefined> {
    let last: number | undefined;
    for (let i = 0; i < events.length; i += MAX_BATCH) {
      const batch = events.slice(i, i + MAX_BATCH);
      const json = batch.map((item) => item.json);
      const { rows } = await sql<{ last_seq: number }>`
        with head as (
          insert into task_event_seqs (task_id, last_seq) values (${taskId}, ${batch.length})
          on conflict (task_id) do update set last_seq = task_event_seqs.last_seq + excluded.last_seq
          returning last_seq
        ), inserted as (
          insert into task_events (task_id, seq, origin, event_json, created_ms)
          select ${taskId}, head.last_seq - ${batch.length} + e.n, ${this.instanceId}, e.json, ${nowMs}
          from head, unnest(${json}::text[]) with ordinality as e(json, n)
          returning seq
        ), marked as (
          update tasks set event_seq = (select last_seq from head)${bumpVersion ? sql`, version = version + 1` : sql``}
          where id = ${taskId}
        )
        select last_seq from head`.execute(trx);
      last = Number(rows[0]!.last_seq);
      batch.forEach((item, n) => markSeq(item.event, last! - batch.length + 1 + n));
    }
    return last;
  }
}
