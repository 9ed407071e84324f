import { sql, type Kysely } from 'kysely';
import type { Database } from './database.js';
import { nowMs } from './postgres-clock.js';

/** Events appended by one statement at most, so one statement stays a bounded size. */
const MAX_BATCH = 100;

/** Tries of one append that lost the race for the task's next seq to another instance. */
const MAX_ATTEMPTS = 20;

const UNIQUE_VIOLATION = '23505';

/**
 * Appends each task's events to `task_events`, in the order they were published here, one
 * append at a time per task (events published while one is under way go together in the next),
 * and wakes the other instances with `pg_notify` in the same statement, so the wake-up is sent
 * when, and only if, the events are committed.
 *
 * A task's next seq is its highest plus one. Two instances appending to one task at once pick
 * the same seq; the primary key refuses the second, which tries again. So a seq is only ever
 * taken once the one below it is committed, and a follower reading "seq > n" in order can
 * miss nothing. A task with no stored events (none yet, or all pruned) starts from
 * PostgreSQL's clock in microseconds instead of 1: far above any seq it had before (that would
 * take more than one event per microsecond for the task's whole life), so pruning never makes
 * a seq come back while a follower still stands at it.
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
    for (let attempt = 1; ; attempt++) {
      try {
        await sql`
          with last as (
            select max(seq) as seq from task_events where task_id = ${taskId}
          ), inserted as (
            insert into task_events (task_id, seq, origin, event_json, created_ms)
            select ${taskId}, coalesce(last.seq, (extract(epoch from now()) * 1000000)::bigint) + e.n, ${this.instanceId}, e.json, ${nowMs}
            from last, unnest(${batch}::text[]) with ordinality as e(json, n)
            returning seq
          )
          select pg_notify(${this.channel}, max(seq) || ' ' || ${taskId}) from inserted`.execute(this.db);
        return;
      } catch (error) {
        if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }
}
