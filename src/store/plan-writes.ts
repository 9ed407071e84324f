import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';
import { QueryTemplate } from './query-template.js';
import { timestampMillis } from './codec.js';
import type { SavePlan } from './save-plan.js';
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
 * The task row's update, one template per set of columns it writes (status, metadata, both or
 * neither), and the inserts of N rows, one template per N: every event of a turn and every
 * command runs some of these (see `query-template.ts`).
 */
const taskUpdates = new Map<string, QueryTemplate<Database, readonly unknown[]>>();
const rowInserts = new Map<string, QueryTemplate<Database, readonly unknown[]>>();

function updateTaskRow(
  trx: Kysely<Database>,
  taskId: string,
  plan: SavePlan,
  now: string,
  fence: number | undefined,
): Promise<unknown> {
  const withFence = fence !== undefined;
  const withGeneration = plan.generation !== undefined;
  const shape = `${plan.statusChanged ? 's' : ''}${plan.metadataChanged ? 'm' : ''}${withFence ? 'f' : ''}${withGeneration ? 'g' : ''}`;
  let template = taskUpdates.get(shape);
  if (!template) {
    const withStatus = plan.statusChanged;
    const withMetadata = plan.metadataChanged;
    const fenceAt = (withStatus ? 4 : 0) + (withMetadata ? 1 : 0);
    const generationAt = fenceAt + (withFence ? 1 : 0);
    template = new QueryTemplate(2 + generationAt + (withGeneration ? 1 : 0), (db, id, updatedAt, ...rest) =>
      db
        .updateTable('tasks')
        .set((eb) => ({
          ...(withStatus
            ? { state: rest[0], status_json: rest[1], status_timestamp: rest[2], status_time_ms: rest[3] }
            : {}),
          ...(withMetadata ? { metadata_json: rest[withStatus ? 4 : 0] } : {}),
          ...(withFence ? { fence_epoch: rest[fenceAt] } : {}),
          ...(withGeneration ? { generation: rest[generationAt] } : {}),
          updated_at: updatedAt,
          version: eb('version', '+', 1),
        }))
        .where('id', '=', id),
    );
    taskUpdates.set(shape, template);
  }
  const status = plan.statusChanged ? statusColumns(plan) : undefined;
  return template.run(trx, [
    taskId,
    now,
    ...(status ? [status.state, status.status_json, status.status_timestamp, status.status_time_ms] : []),
    ...(plan.metadataChanged ? [plan.metadataJson] : []),
    ...(withFence ? [fence] : []),
    ...(withGeneration ? [plan.generation] : []),
  ]);
}

/** Inserts `rows` (arrays of `columns`' values) into `table`, a template per table and row count. */
function insertRows<T extends 'task_messages' | 'artifact_parts'>(
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
    await updateTaskRow(trx, task.id, plan, now, fence);
  }

  // Messages put before stored ones: the rows from their place on are written again.
  if (plan.messagesFrom !== undefined) {
    await trx
      .deleteFrom('task_messages')
      .where('task_id', '=', task.id)
      .where('seq', '>=', plan.messagesFrom)
      .execute();
  }
  for (const batch of chunks(plan.messages)) {
    await insertRows(
      trx,
      'task_messages',
      MESSAGE_COLUMNS,
      batch.map((m) => [task.id, m.seq, m.messageId, m.json]),
    );
  }

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
    const rows = write.partJson.map((json, i) => [task.id, write.artifactId, write.firstPartSeq + i, json]);
    for (const batch of chunks(rows)) await insertRows(trx, 'artifact_parts', PART_COLUMNS, batch);
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
