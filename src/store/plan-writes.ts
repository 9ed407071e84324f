import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';
import { timestampMillis } from './codec.js';
import type { SavePlan } from './save-plan.js';
import {
  addStoredMessage,
  appendStoredParts,
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
function statusColumns(plan: SavePlan): { state: number; status_json: string | null; status_timestamp: string; status_time_ms: number | null } {
  const status = plan.status;
  return {
    state: status?.state ?? 0,
    status_json: plan.statusJson,
    status_timestamp: status?.timestamp ?? '',
    status_time_ms: timestampMillis(status?.timestamp),
  };
}

export async function writePlan(trx: Transaction<Database> | Kysely<Database>, task: TaskIdentity, plan: SavePlan, now: string): Promise<void> {
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
      })
      .execute();
  } else {
    await trx
      .updateTable('tasks')
      .set((eb) => ({
        ...(plan.statusChanged ? statusColumns(plan) : {}),
        ...(plan.metadataChanged ? { metadata_json: plan.metadataJson } : {}),
        updated_at: now,
        version: eb('version', '+', 1),
      }))
      .where('id', '=', task.id)
      .execute();
  }

  for (const batch of chunks(plan.messages)) {
    await trx
      .insertInto('task_messages')
      .values(batch.map((m) => ({ task_id: task.id, seq: m.seq, message_id: m.messageId, message_json: m.json })))
      .execute();
  }

  for (const write of plan.artifacts) {
    if (write.kind === 'insert') {
      await trx.insertInto('task_artifacts').values({ task_id: task.id, artifact_id: write.artifactId, seq: write.seq, header_json: write.headerJson }).execute();
    } else {
      if (write.kind === 'replace') {
        await trx.deleteFrom('artifact_parts').where('task_id', '=', task.id).where('artifact_id', '=', write.artifactId).execute();
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
    const rows = write.partJson.map((json, i) => ({ task_id: task.id, artifact_id: write.artifactId, seq: write.firstPartSeq + i, part_json: json }));
    for (const batch of chunks(rows)) await trx.insertInto('artifact_parts').values(batch).execute();
  }
}

/** The image after the plan committed: `stored` changed in place, or a new image for a new task. */
export function applyPlan(stored: StoredTask | undefined, task: TaskIdentity, plan: SavePlan, now: string): StoredTask {
  const image = stored ?? newStoredTask({ ...task, createdAt: now, version: 0, statusJson: plan.statusJson, metadataJson: plan.metadataJson });
  if (stored) stored.version += 1;
  if (plan.statusChanged) setStoredStatus(image, plan.statusJson);
  if (plan.metadataChanged) setStoredMetadata(image, plan.metadataJson);
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
