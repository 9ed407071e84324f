import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import { addStoredMessage, newStoredTask, putStoredArtifact, type StoredTask } from './stored-task.js';
import type { TaskScope } from './task-cache.js';

/**
 * Reading whole tasks from their rows: on a cache miss (one task, once, then cached) and for
 * a page of `list` (at most a page of tasks, in four queries whatever the page size).
 */

/**
 * Where a task id is stored, whoever owns it: for the harness's own paths that have no caller
 * (recovery, a cancel), and to explain a refused save. Never to answer a caller.
 */
export async function findTaskScope(db: Kysely<Database>, taskId: string): Promise<TaskScope | undefined> {
  return db.selectFrom('tasks').select(['tenant', 'owner']).where('id', '=', taskId).executeTakeFirst();
}

/**
 * Reads the given tasks with their history and, when `withArtifacts`, their artifacts.
 * Tasks that are not stored, or not in `scope` when one is given, are absent from the result;
 * the scope is part of the query, so a task of another scope costs what a missing one costs.
 */
export async function readStoredTasks(
  db: Kysely<Database>,
  taskIds: readonly string[],
  options: { withArtifacts: boolean; scope?: TaskScope },
): Promise<Map<string, StoredTask>> {
  const result = new Map<string, StoredTask>();
  if (taskIds.length === 0) return result;

  let query = db
    .selectFrom('tasks')
    .selectAll()
    .where('id', 'in', [...taskIds]);
  if (options.scope) query = query.where('tenant', '=', options.scope.tenant).where('owner', '=', options.scope.owner);
  const heads = await query.execute();
  for (const row of heads) {
    result.set(
      row.id,
      newStoredTask({
        id: row.id,
        contextId: row.context_id,
        tenant: row.tenant,
        owner: row.owner,
        createdAt: row.created_at,
        version: row.version,
        generation: Number(row.generation),
        statusJson: row.status_json,
        metadataJson: row.metadata_json,
      }),
    );
  }
  if (result.size === 0) return result;
  const ids = [...result.keys()];

  const messages = await db
    .selectFrom('task_messages')
    .select(['task_id', 'message_json'])
    .where('task_id', 'in', ids)
    .orderBy('task_id')
    .orderBy('seq')
    .execute();
  for (const row of messages) {
    const stored = result.get(row.task_id);
    if (stored) addStoredMessage(stored, row.message_json);
  }

  if (!options.withArtifacts) return result;
  const headers = await db
    .selectFrom('task_artifacts')
    .select(['task_id', 'artifact_id', 'header_json'])
    .where('task_id', 'in', ids)
    .orderBy('task_id')
    .orderBy('seq')
    .execute();
  const parts = await db
    .selectFrom('artifact_parts')
    .select(['task_id', 'artifact_id', 'part_json'])
    .where('task_id', 'in', ids)
    .orderBy('task_id')
    .orderBy('artifact_id')
    .orderBy('seq')
    .execute();
  const partsByArtifact = new Map<string, string[]>();
  for (const row of parts) {
    const key = `${row.task_id}\0${row.artifact_id}`;
    const list = partsByArtifact.get(key);
    if (list) list.push(row.part_json);
    else partsByArtifact.set(key, [row.part_json]);
  }
  for (const row of headers) {
    const stored = result.get(row.task_id);
    if (stored)
      putStoredArtifact(
        stored,
        row.artifact_id,
        row.header_json,
        partsByArtifact.get(`${row.task_id}\0${row.artifact_id}`) ?? [],
      );
  }
  return result;
}

/** One task with everything it holds, or undefined when it is not stored in `scope`. */
export async function readStoredTask(
  db: Kysely<Database>,
  taskId: string,
  scope: TaskScope,
): Promise<StoredTask | undefined> {
  return (await readStoredTasks(db, [taskId], { withArtifacts: true, scope })).get(taskId);
}
