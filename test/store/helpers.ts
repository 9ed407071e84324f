import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import { ServerCallContext, type User } from '@a2a-js/sdk/server';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrateToLatest, openStore, type Database, type OpenStoreOptions, type SqlTaskStateStore, type Store } from '../../src/store/index.js';

/** Shared set-up for the store tests: temporary data folders, call contexts, task builders. */

export interface TempStore {
  dir: string;
  store: Store;
  /** Closes the store and opens it again on the same file (a restart). */
  reopen(options?: Omit<OpenStoreOptions, 'dataDir'>): Promise<Store>;
  /** Closes the store and removes the folder. */
  dispose(): Promise<void>;
}

export async function tempStore(options: Omit<OpenStoreOptions, 'dataDir'> = {}): Promise<TempStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-store-'));
  const handle: TempStore = {
    dir,
    store: await openStore({ dataDir: dir, ...options }),
    async reopen(again = options) {
      await handle.store.close();
      handle.store = await openStore({ dataDir: dir, ...again });
      return handle.store;
    },
    async dispose() {
      await handle.store.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

class NamedUser implements User {
  constructor(readonly userName: string) {}
  get isAuthenticated(): boolean {
    return true;
  }
}

/** A call context for `user` (anonymous when absent) in `tenant`. */
export function callContext(user?: string, tenant?: string): ServerCallContext {
  return new ServerCallContext({ user: user ? new NamedUser(user) : undefined, tenant, requestedVersion: '1.0' });
}

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: {} };
}

export function message(taskId: string, contextId: string, role: Role, text: string, messageId: string = randomUUID()): Message {
  return { messageId, contextId, taskId, role, parts: [textPart(text)], metadata: {}, extensions: [], referenceTaskIds: [] };
}

export function artifact(artifactId: string, parts: Part[], name = ''): Artifact {
  return { artifactId, name, description: '', parts, metadata: {}, extensions: [] };
}

export function newTask(options: { id?: string; contextId?: string; state?: TaskState; timestamp?: string; history?: Message[] } = {}): Task {
  const id = options.id ?? randomUUID();
  const contextId = options.contextId ?? randomUUID();
  return {
    id,
    contextId,
    status: { state: options.state ?? TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: options.timestamp ?? new Date().toISOString() },
    artifacts: [],
    history: options.history ?? [message(id, contextId, Role.ROLE_USER, 'hello')],
    metadata: {},
  };
}

/** An ISO timestamp `seconds` after a fixed instant, for ordering tests. */
export function at(seconds: number): string {
  return new Date(Date.UTC(2025, 0, 1, 12, 0, 0) + seconds * 1000).toISOString();
}

export interface RecordedQuery {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * A migrated database on a file in `dir` whose every query is recorded, to check what a save
 * writes (and that it reads nothing on a cache hit).
 */
export async function recordingDatabase(dir: string): Promise<{ db: Kysely<Database>; queries: RecordedQuery[] }> {
  const queries: RecordedQuery[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: new BetterSqlite3(join(dir, 'recorded.db')) }),
    log: (event) => {
      if (event.level === 'query') queries.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  await migrateToLatest(db);
  queries.length = 0;
  return { db, queries };
}

/** Links `childId` to `parentId` as a sub-task start does, without storing the child task itself. */
export function linkSubtask(state: SqlTaskStateStore, db: Kysely<Database>, parentId: string, childId: string, model = 'builtin:echo'): Promise<void> {
  return state.writeSubtask(parentId, childId, model, (writes) => db.transaction().execute(writes));
}
