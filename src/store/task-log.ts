import type { Artifact, Message, Task } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { Kysely, Transaction } from 'kysely';
import { isTerminal } from '../wire.js';
import type { Database } from './database.js';
import { decodeAgentEvent, encodeAgentEvent } from './event-codec.js';
import { copyTask } from './stored-task.js';
import type { LoggedEvent } from '../ports.js';
import { insertRows } from './plan-writes.js';

/**
 * A task's ordered event log. Every change to a task is an event the engine appends; the event
 * and the task it produces are stored in one transaction (`TaskImages.write`). The task's
 * **generation** numbers the events, as A2A 1.1's draft defines it: 1 when the task is created,
 * plus one for each event after (a status update, an artifact added or updated). The task row
 * keeps its generation, so a reader that reads the task and then the log after that generation
 * misses nothing and is sent nothing twice.
 *
 * Generations are given under the task's row lock (its version check, `task-images.ts`): a
 * generation is committed only after every lower one is, so a reader taking "generation > n" in
 * order can miss none.
 */

/** Rows inserted by one statement at most, so that one statement stays a bounded size. */
const INSERT_BATCH = 100;
/** Rows read by one query at most. */
const READ_BATCH = 500;

/**
 * Applies `event` to `task`, a working copy (`copyTask`) changed in place; undefined for no task
 * yet. Resolves with the task after it (a new one for a task event on no task), or undefined
 * when the event changes nothing and is not logged: a status for a task that has ended, as the
 * SDK's result manager ignores it, or an event for no task. The rules are the SDK's result manager's,
 * but for metadata: a status update's metadata belongs to the event (a command reply's keys,
 * CMD-6), not to the task; and for a status message given `after` (a turn's final message,
 * `TurnWrite.replyAfter`), which joins the history right after that message, not at its end.
 */
export function applyEvent(task: Task | undefined, event: AgentExecutionEvent, after?: string): Task | undefined {
  switch (event.kind) {
    case 'task': {
      const given = event.data;
      if (!task) return copyTask({ ...given, history: given.history ?? [], artifacts: given.artifacts ?? [] });
      if (given.status) task.status = given.status;
      // The history is append-only: messages not stored join it (`save-plan.ts`).
      task.history.push(...(given.history ?? []));
      for (const artifact of given.artifacts ?? []) putArtifact(task, artifact);
      task.metadata = { ...task.metadata, ...given.metadata };
      return task;
    }
    case 'statusUpdate': {
      if (!task) return undefined;
      const update = event.data;
      const state = task.status?.state;
      if (isTerminal(state) && update.status?.state !== state) return undefined;
      task.status = update.status;
      if (update.status?.message) insertAfter(task.history, update.status.message, after);
      return task;
    }
    case 'artifactUpdate': {
      const { artifact, append } = event.data;
      if (!task || !artifact) return undefined;
      const existing = task.artifacts.find((a) => a.artifactId === artifact.artifactId);
      if (existing && append) {
        existing.parts.push(...artifact.parts);
        if (artifact.name) existing.name = artifact.name;
        if (artifact.description) existing.description = artifact.description;
        if (artifact.metadata) existing.metadata = { ...existing.metadata, ...artifact.metadata };
      } else putArtifact(task, artifact);
      return task;
    }
    case 'message':
      return undefined;
  }
}

/**
 * Puts `message` right after the newest message with the id `after` (an id may recur, CMD-34),
 * or at the end when `after` is not given or not in the history.
 */
function insertAfter(history: Message[], message: Message, after: string | undefined): void {
  let at = history.length;
  if (after !== undefined) {
    const found = history.findLastIndex((m) => m.messageId === after);
    if (found >= 0) at = found + 1;
  }
  history.splice(at, 0, message);
}

function putArtifact(task: Task, artifact: Artifact): void {
  const index = task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
  const copy = { ...artifact, parts: artifact.parts.slice() };
  if (index < 0) task.artifacts.push(copy);
  else task.artifacts[index] = copy;
}

/** The events' rows, numbered from `first`, in the transaction that writes their task. */
export async function insertLogRows(
  trx: Transaction<Database> | Kysely<Database>,
  taskId: string,
  logged: readonly LoggedEvent[],
  nowMs: number,
): Promise<void> {
  // A template per row count (`plan-writes.ts`): every write runs this.
  const rows = logRows(taskId, logged, nowMs).map((row) => LOG_COLUMNS.map((column) => row[column]));
  for (let i = 0; i < rows.length; i += INSERT_BATCH)
    await insertRows(trx, 'task_events', LOG_COLUMNS, rows.slice(i, i + INSERT_BATCH));
}

const LOG_COLUMNS = ['task_id', 'generation', 'event_json', 'created_ms'] as const;

/** The events' rows in `task_events`, each encoded once, for either write strategy (`task-commit.ts`). */
export function logRows(
  taskId: string,
  logged: readonly LoggedEvent[],
  nowMs: number,
): Array<{ task_id: string; generation: number; event_json: string; created_ms: number }> {
  return logged.map(({ generation, event }) => ({
    task_id: taskId,
    generation,
    event_json: encodeAgentEvent(event),
    created_ms: nowMs,
  }));
}

/** The task's logged events after generation `after`, in order; at most a batch (read again for more). */
export async function readLogAfter(db: Kysely<Database>, taskId: string, after: number): Promise<LoggedEvent[]> {
  const rows = await db
    .selectFrom('task_events')
    .select(['generation', 'event_json'])
    .where('task_id', '=', taskId)
    .where('generation', '>', after)
    .orderBy('generation')
    .limit(READ_BATCH)
    .execute();
  return rows.map((row) => ({ generation: Number(row.generation), event: decodeAgentEvent(row.event_json) }));
}

/** Whether a read returned a whole batch: more may follow. */
export function isWholeBatch(read: readonly LoggedEvent[]): boolean {
  return read.length === READ_BATCH;
}

/** The task's generation as stored, or undefined when it is not stored. */
export async function storedGeneration(db: Kysely<Database>, taskId: string): Promise<number | undefined> {
  const row = await db.selectFrom('tasks').select('generation').where('id', '=', taskId).executeTakeFirst();
  return row ? Number(row.generation) : undefined;
}

/**
 * How long a task's events stay in its log: until every reader following the task has read
 * them, which takes a notification's round trip, or, shared, when an instance's LISTEN
 * connection dropped, until it reconnects and reads what it missed. Minutes are far beyond both.
 */
export const LOG_KEEP_MS = 5 * 60_000;

/** Deletes the events older than `keepMs`; resolves with how many. */
export async function pruneLog(db: Kysely<Database>, keepMs: number, nowMs = Date.now()): Promise<number> {
  const result = await db
    .deleteFrom('task_events')
    .where('created_ms', '<', nowMs - keepMs)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
