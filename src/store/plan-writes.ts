import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';
import { QueryTemplate } from './query-template.js';
import { timestampMillis } from './codec.js';
import type { ArtifactWrite, SavePlan } from './save-plan.js';
import {
  addStoredMessage,
  appendStoredParts,
  dropStoredMessages,
  newStoredTask,
  putStoredArtifact,
  setStoredArtifactHeader,
  setStoredMetadata,
  setStoredStatus,
  type StoredTask,
} from './stored-task.js';

/**
 * Carrying out a `SavePlan`: first in the database, inside the save's one transaction, then,
 * once that committed, on the in-memory image. If the transaction fails the image is left
 * as it was (the store drops it, and the next use reads the rows again). Every write of a
 * stored task adds one to its row's version, and the image follows.
 */

/** Rows per multi-row insert: far below SQLite's and PostgreSQL's bound-parameter limits. */
const INSERT_CHUNK = 200;

export interface TaskIdentity {
  id: string;
  contextId: string;
  tenant: string;
  owner: string;
}

function* chunks<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += INSERT_CHUNK) yield items.slice(i, i + INSERT_CHUNK);
}

/** The task row columns that follow the status. */
export function statusColumns(plan: SavePlan): {
  state: number;
  status_json: string | null;
  status_timestamp: string;
  status_time_ms: number | null;
} {
  const status = plan.status;
  return {
    state: status?.state ?? 0,
    status_json: plan.statusJson,
    status_timestamp: status?.timestamp ?? '',
    status_time_ms: timestampMillis(status?.timestamp),
  };
}

/**
 * The task row's columns a write of a stored task sets besides its version, in a fixed order:
 * the statements of every strategy (`writePlan`, `one-statement-write.ts`) build their update
 * from these.
 */
export function taskRowChanges(plan: SavePlan, now: string, fence: number | undefined): Record<string, unknown> {
  return {
    ...(plan.statusChanged ? statusColumns(plan) : {}),
    ...(plan.metadataChanged ? { metadata_json: plan.metadataJson } : {}),
    ...(fence !== undefined ? { fence_epoch: fence } : {}),
    ...(plan.generation !== undefined ? { generation: plan.generation } : {}),
    updated_at: now,
  };
}

/** The plan's message rows, in `MESSAGE_COLUMNS` order. */
export function messageRows(taskId: string, plan: SavePlan): unknown[][] {
  return plan.messages.map((m) => [taskId, m.seq, m.messageId, m.json]);
}

/** An artifact write's part rows, in `PART_COLUMNS` order. */
export function partRows(taskId: string, write: ArtifactWrite): unknown[][] {
  return write.partJson.map((json, i) => [taskId, write.artifactId, write.firstPartSeq + i, json]);
}

/**
 * The task row's update, one template per set of columns it writes, and the inserts of N rows,
 * one template per N: every event of a turn and every command runs some of these (see
 * `query-template.ts`).
 */
const taskUpdates = new Map<string, QueryTemplate<Database, readonly unknown[]>>();
const rowInserts = new Map<string, QueryTemplate<Database, readonly unknown[]>>();

function updateTaskRow(trx: Kysely<Database>, taskId: string, changes: Record<string, unknown>): Promise<unknown> {
  const columns = Object.keys(changes);
  const shape = columns.join(',');
  let template = taskUpdates.get(shape);
  if (!template) {
    template = new QueryTemplate(1 + columns.length, (db, id, ...values) =>
      db
        .updateTable('tasks')
        .set((eb) => ({
          ...(Object.fromEntries(columns.map((column, i) => [column, values[i]])) as object),
          version: eb('version', '+', 1),
        }))
        .where('id', '=', id),
    );
    taskUpdates.set(shape, template);
  }
  return template.run(trx, [taskId, ...Object.values(changes)]);
}

/** Inserts `rows` (arrays of `columns`' values) into `table`, a template per table and row count. */
export function insertRows<T extends 'task_messages' | 'artifact_parts' | 'task_events'>(
  trx: Kysely<Database>,
  table: T,
  columns: readonly string[],
  rows: readonly unknown[][],
): Promise<unknown> {
  const key = `${table}:${rows.length}`;
  let template = rowInserts.get(key);
  if (!template) {
    template = new QueryTemplate(rows.length * columns.length, (db, ...values) =>
      db
        .insertInto(table)
        .values(
          rows.map(
            (_, r) => Object.fromEntries(columns.map((column, c) => [column, values[r * columns.length + c]])) as never,
          ),
        ),
    );
    rowInserts.set(key, template);
  }
  return template.run(trx, rows.flat());
}

const MESSAGE_COLUMNS = ['task_id', 'seq', 'message_id', 'message_json'] as const;
const PART_COLUMNS = ['task_id', 'artifact_id', 'seq', 'part_json'] as const;

export async function writePlan(
  trx: Transaction<Database> | Kysely<Database>,
  task: TaskIdentity,
  plan: SavePlan,
  now: string,
  /** A turn's write (shared): the row's fence becomes its lease's epoch (`task-images.ts`). */
  fence?: number,
): Promise<void> {
  if (plan.isNew) {
    await trx
      .insertInto('tasks')
      .values({
        id: task.id,
        context_id: task.contextId,
        tenant: task.tenant,
        owner: task.owner,
        ...statusColumns(plan),
        metadata_json: plan.metadataJson,
        created_at: now,
        updated_at: now,
        version: 0,
        generation: plan.generation ?? 0,
        ...(fence !== undefined ? { fence_epoch: fence } : {}),
      })
      .execute();
  } else {
    await updateTaskRow(trx, task.id, taskRowChanges(plan, now, fence));
  }

  // Messages put before stored ones: the rows from their place on are written again.
  if (plan.messagesFrom !== undefined) {
    await trx
      .deleteFrom('task_messages')
      .where('task_id', '=', task.id)
      .where('seq', '>=', plan.messagesFrom)
      .execute();
  }
  for (const batch of chunks(messageRows(task.id, plan)))
    await insertRows(trx, 'task_messages', MESSAGE_COLUMNS, batch);

  for (const write of plan.artifacts) {
    if (write.kind === 'insert') {
      await trx
        .insertInto('task_artifacts')
        .values({ task_id: task.id, artifact_id: write.artifactId, seq: write.seq, header_json: write.headerJson })
        .execute();
    } else {
      if (write.kind === 'replace') {
        await trx
          .deleteFrom('artifact_parts')
          .where('task_id', '=', task.id)
          .where('artifact_id', '=', write.artifactId)
          .execute();
      }
      if (write.headerChanged) {
        await trx
          .updateTable('task_artifacts')
          .set({ header_json: write.headerJson })
          .where('task_id', '=', task.id)
          .where('artifact_id', '=', write.artifactId)
          .execute();
      }
    }
    for (const batch of chunks(partRows(task.id, write))) await insertRows(trx, 'artifact_parts', PART_COLUMNS, batch);
  }
}

/** The image after the plan committed: `stored` changed in place, or a new image for a new task. */
export function applyPlan(stored: StoredTask | undefined, task: TaskIdentity, plan: SavePlan, now: string): StoredTask {
  const image =
    stored ??
    newStoredTask({
      ...task,
      createdAt: now,
      version: 0,
      statusJson: plan.statusJson,
      metadataJson: plan.metadataJson,
    });
  if (stored) stored.version += 1;
  if (plan.generation !== undefined) image.generation = plan.generation;
  if (plan.statusChanged) setStoredStatus(image, plan.statusJson);
  if (plan.metadataChanged) setStoredMetadata(image, plan.metadataJson);
  if (plan.messagesFrom !== undefined) dropStoredMessages(image, plan.messagesFrom);
  for (const message of plan.messages) addStoredMessage(image, message.json);
  for (const write of plan.artifacts) {
    if (write.kind === 'update') {
      if (write.headerChanged) setStoredArtifactHeader(image, write.artifactId, write.headerJson);
      appendStoredParts(image, write.artifactId, write.partJson);
    } else {
      putStoredArtifact(image, write.artifactId, write.headerJson, write.partJson);
    }
  }
  return image;
}
