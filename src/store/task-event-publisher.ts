import { sql, type Kysely } from 'kysely';
import type { Database } from './database.js';
import { nowMs } from './postgres-clock.js';

/** Events appended by one statement at most, so one statement stays a bounded size. */
const MAX_BATCH = 100;

/**
 * Appends each task's events to `task_events`, in the order they were published here, one
 * append at a time per task (events published while one is under way go together in the next),
 * and wakes the other instances with `pg_notify` in the same statement, so the wake-up is sent
 * when, and only if, the events are committed.
 *
 * Seqs come from the task's row in `task_event_seqs`, raised by an upsert in the same
 * statement. The upsert's row lock makes a second instance appending to the task wait until
 * the first commits, so a seq is only ever given once every seq below it is committed: a
 * follower reading "seq > n" in seq order can miss nothing. (The task's highest stored seq plus
 * one would not do: once pruning has emptied a task, its seqs would start again from 1, below
 * where a follower stands.) The primary key of `task_events` still refuses any seq given twice.
 *
 * The notification carries only "<last seq> <task id>", far below the 8,000-byte cap; the
 * events themselves are read from the table (notifications are not durable).
 */
export class TaskEventPublisher {
  private readonly queues = new Map<string, { events: string[]; done: Promise<void> }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly instanceId: string,
    private readonly channel: string,
    private readonly onError: (error: unknown, what: string) => void,
  ) {}

  /** Queues an encoded event of the task; appended after every event queued before it for the task. */
  publish(taskId: string, eventJson: string): void {
    const queue = this.queues.get(taskId);
    if (queue) {
      queue.events.push(eventJson);
      return;
    }
    const fresh = { events: [eventJson], done: Promise.resolve() };
    this.queues.set(taskId, fresh);
    fresh.done = this.drain(taskId, fresh.events);
  }

  /** Resolves once every event queued so far is appended (or reported as failed). */
  /** Resolves once the task's events published so far are appended (or reported as failed). */
  handedOver(taskId: string): Promise<void> {
    return this.queues.get(taskId)?.done ?? Promise.resolve();
  }

  async flush(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.done));
  }

  private async drain(taskId: string, events: string[]): Promise<void> {
    while (events.length > 0) {
      const batch = events.splice(0, MAX_BATCH);
      try {
        await this.append(taskId, batch);
      } catch (error) {
        this.onError(error, `publishing ${batch.length} event(s) of task ${taskId}`);
      }
    }
    // Synchronously after the last check: an event published from here on starts a new queue.
    this.queues.delete(taskId);
  }

  private async append(taskId: string, batch: string[]): Promise<void> {
    await sql`
      with head as (
        insert into task_event_seqs (task_id, last_seq) values (${taskId}, ${batch.length})
        on conflict (task_id) do update set last_seq = task_event_seqs.last_seq + excluded.last_seq
        returning last_seq
      ), inserted as (
        insert into task_events (task_id, seq, origin, event_json, created_ms)
        select ${taskId}, head.last_seq - ${batch.length} + e.n, ${this.instanceId}, e.json, ${nowMs}
        from head, unnest(${batch}::text[]) with ordinality as e(json, n)
        returning seq
      )
      select pg_notify(${this.channel}, max(seq) || ' ' || ${taskId}) from inserted`.execute(this.db);
  }
}
