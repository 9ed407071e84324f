import { TaskState, type ListTasksRequest } from '@a2a-js/sdk';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database } from './database.js';
import { HarnessError } from '../errors.js';

/**
 * The SQL half of `ListTasks`: which task ids make up the requested page, with the same
 * semantics as the SDK's `InMemoryTaskStore.list` (filters, order, page size, total size and
 * page token format), so clients cannot tell the stores apart. The page's tasks are then
 * assembled by the store from its cache or their rows; no other task is read.
 *
 * One deliberate difference: the page token is used as a keyset cursor (tasks after that
 * position), so a page still follows when the task named in the token changed meanwhile,
 * where the in-memory store would answer an empty page.
 */

/** The SDK's default when the request names no page size. */
export const DEFAULT_PAGE_SIZE = 50;

export interface TaskPage {
  ids: string[];
  /** Each task's row version, by position: a kept image of another version is outdated. */
  versions: number[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/** The SDK's token: base64 of `timestamp|id`. */
export function encodePageToken(timestamp: string, id: string): string {
  return Buffer.from(`${timestamp}|${id}`).toString('base64');
}

export function decodePageToken(token: string): { timestamp: string; id: string } {
  const [timestamp = '', ...idParts] = Buffer.from(token, 'base64').toString('utf-8').split('|');
  if (idParts.length === 0) throw new HarnessError('params_invalid', 'Invalid page token format.');
  return { timestamp, id: idParts.join('|') };
}

type TaskQuery = SelectQueryBuilder<Database, 'tasks', object>;

function filtered(
  db: Kysely<Database>,
  scope: { tenant: string; owner: string },
  params: ListTasksRequest,
): TaskQuery | undefined {
  let query: TaskQuery = db.selectFrom('tasks').where('tenant', '=', scope.tenant).where('owner', '=', scope.owner);
  if (params.contextId) query = query.where('context_id', '=', params.contextId);
  if (params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED) {
    query = query.where('state', '=', params.status);
  }
  if (params.statusTimestampAfter) {
    const after = Date.parse(params.statusTimestampAfter);
    // Like the SDK: nothing is "after" a date that cannot be read.
    if (Number.isNaN(after)) return undefined;
    query = query.where('status_time_ms', '>', after);
  }
  return query;
}

export async function queryTaskPage(
  db: Kysely<Database>,
  scope: { tenant: string; owner: string },
  params: ListTasksRequest,
): Promise<TaskPage> {
  const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
  const query = filtered(db, scope, params);
  if (!query) return { ids: [], versions: [], nextPageToken: '', pageSize, totalSize: 0 };

  const counted = await query.select((eb) => eb.fn.countAll().as('total')).executeTakeFirst();
  const totalSize = Number(counted?.total ?? 0);

  let page = query
    .select(['id', 'status_timestamp', 'version'])
    .orderBy('status_timestamp', 'desc')
    .orderBy('id', 'desc')
    .limit(pageSize + 1);
  if (params.pageToken) {
    const cursor = decodePageToken(params.pageToken);
    page = page.where((eb) =>
      eb.or([
        eb('status_timestamp', '<', cursor.timestamp),
        eb.and([eb('status_timestamp', '=', cursor.timestamp), eb('id', '<', cursor.id)]),
      ]),
    );
  }
  const rows = await page.execute();
  const hasMore = rows.length > pageSize;
  const pageRows = hasMore ? rows.slice(0, pageSize) : rows;
  const last = pageRows.at(-1);
  return {
    ids: pageRows.map((row) => row.id),
    versions: pageRows.map((row) => row.version),
    nextPageToken: hasMore && last ? encodePageToken(last.status_timestamp, last.id) : '',
    pageSize,
    totalSize,
  };
}
