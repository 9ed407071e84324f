import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import { ServerCallContext, type AgentExecutionEvent, type User } from '@a2a-js/sdk/server';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import {
  migrateToLatest,
  openStore,
  type Database,
  type OpenStoreOptions,
  type SqlTaskStateStore,
  type Store,
} from '../../src/store/index.js';
import { openPostgresDatabase } from '../../src/store/postgres-database.js';
import { QueryTemplate } from '../../src/store/query-template.js';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema } from '../support/postgres.js';

/**
 * Shared set-up for the store tests: the two backends every store test runs on, temporary
 * databases of each, call contexts, task builders.
 */

// Every statement the store runs from a template is checked against its kysely twin, built
// with the same values (`query-template.ts`): the store's tests pass both ways or fail.
QueryTemplate.checkTwins = true;

/** Where a test's database lives: a SQLite file in a temporary folder, or a PostgreSQL schema. */
interface TempDatabase {
  /** What `openStore` is given to open it. */
  where: Pick<OpenStoreOptions, 'dataDir' | 'databaseUrl'>;
  /** The SQLite folder; undefined on PostgreSQL. */
  dir?: string;
  /** Removes the database and everything in it. */
  drop(): Promise<void>;
}

export interface StoreBackend {
  /** For test titles: "SQLite" or "PostgreSQL". */
  readonly name: string;
  /** Whether several stores (harness instances) may share one database of this kind. */
  readonly shared: boolean;
  /**
   * Options for `describe`: skipped with the hint where this backend is missing (a failure
   * under CI, see `needs`). Asked once per test file.
   */
  readonly needs: { skip?: string };
  /** A new, empty database. */
  create(): Promise<TempDatabase>;
}

export const SQLITE: StoreBackend = {
  name: 'SQLite',
  shared: false,
  needs: {},
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-store-'));
    return { where: { dataDir: dir }, dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

let postgresNeeds: { skip?: string } | undefined;

export const POSTGRESQL: StoreBackend = {
  name: 'PostgreSQL',
  shared: true,
  get needs() {
    return (postgresNeeds ??= needs(POSTGRES));
  },
  async create() {
    const schema = await tempSchema();
    return { where: { databaseUrl: schema.url }, drop: () => schema.drop() };
  },
};

/** Every store test runs on each of these (the PostgreSQL ones where `needs(POSTGRES)` allows). */
export const storeBackends: readonly StoreBackend[] = [SQLITE, POSTGRESQL];

export interface TempStore {
  backend: StoreBackend;
  /** The SQLite folder (for tests of SQLite itself); undefined on PostgreSQL. */
  dir?: string;
  /** What `openStore` is given to open this database. */
  where: Pick<OpenStoreOptions, 'dataDir' | 'databaseUrl'>;
  store: Store;
  /** Closes the store and opens it again on the same database (a restart). */
  reopen(options?: Omit<OpenStoreOptions, 'dataDir' | 'databaseUrl'>): Promise<Store>;
  /** Another store on the same database, as a second harness instance would open it; closed by `dispose`. */
  another(options?: Omit<OpenStoreOptions, 'dataDir' | 'databaseUrl'>): Promise<Store>;
  /** Closes the stores and removes the database. */
  dispose(): Promise<void>;
}

/** A store on a new, empty database of `backend` (SQLite by default). */
export async function tempStore(
  backend: StoreBackend = SQLITE,
  options: Omit<OpenStoreOptions, 'dataDir' | 'databaseUrl'> = {},
): Promise<TempStore> {
  const database = await backend.create();
  const others: Store[] = [];
  let store: Store;
  try {
    store = await openStore({ ...database.where, ...options });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const handle: TempStore = {
    backend,
    dir: database.dir,
    where: database.where,
    store,
    async reopen(again = options) {
      await handle.store.close();
      handle.store = await openStore({ ...database.where, ...again });
      return handle.store;
    },
    async another(again = options) {
      const other = await openStore({ ...database.where, ...again });
      others.push(other);
      return other;
    },
    async dispose() {
      for (const open of [handle.store, ...others]) await open.close().catch(() => undefined);
      await database.drop();
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

export function message(
  taskId: string,
  contextId: string,
  role: Role,
  text: string,
  messageId: string = randomUUID(),
): Message {
  return {
    messageId,
    contextId,
    taskId,
    role,
    parts: [textPart(text)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

export function artifact(artifactId: string, parts: Part[], name = ''): Artifact {
  return { artifactId, name, description: '', parts, metadata: {}, extensions: [] };
}

export function newTask(
  options: { id?: string; contextId?: string; state?: TaskState; timestamp?: string; history?: Message[] } = {},
): Task {
  const id = options.id ?? randomUUID();
  const contextId = options.contextId ?? randomUUID();
  return {
    id,
    contextId,
    status: {
      state: options.state ?? TaskState.TASK_STATE_SUBMITTED,
      message: undefined,
      timestamp: options.timestamp ?? new Date().toISOString(),
    },
    artifacts: [],
    history: options.history ?? [message(id, contextId, Role.ROLE_USER, 'hello')],
    metadata: {},
  };
}

/** The task's task event: what `create` logs first, and what merges into a stored task (`applyEvent`). */
export function taskEvent(task: Task): AgentExecutionEvent {
  return { kind: 'task', data: task };
}

/** A status update of `task` to `state`, carrying `reply` (which joins the history) when given. */
export function statusUpdate(
  task: Pick<Task, 'id' | 'contextId'>,
  state: TaskState,
  reply?: Message,
  timestamp: string | undefined = new Date().toISOString(),
): AgentExecutionEvent {
  return {
    kind: 'statusUpdate',
    data: { taskId: task.id, contextId: task.contextId, status: { state, message: reply, timestamp }, metadata: {} },
  };
}

/** An agent message of `task` saying `text`. */
export function reply(task: Pick<Task, 'id' | 'contextId'>, text: string): Message {
  return message(task.id, task.contextId, Role.ROLE_AGENT, text);
}

/** An artifact update of `task`: `given` added or put in place of the one with its id, or its parts appended to it. */
export function artifactUpdate(
  task: Pick<Task, 'id' | 'contextId'>,
  given: Artifact,
  append = false,
): AgentExecutionEvent {
  return {
    kind: 'artifactUpdate',
    data: { taskId: task.id, contextId: task.contextId, artifact: given, append, lastChunk: false, metadata: {} },
  };
}

/** The texts of the messages' first parts. */
export function texts(messages: readonly Message[] | undefined): string[] {
  return (messages ?? []).map((m) => String(m.parts[0]?.content?.value));
}

/** An ISO timestamp `seconds` after a fixed instant, for ordering tests. */
export function at(seconds: number): string {
  return new Date(Date.UTC(2025, 0, 1, 12, 0, 0) + seconds * 1000).toISOString();
}

export interface RecordedQuery {
  sql: string;
  parameters: readonly unknown[];
}

/** A database of `backend` with no table yet, opened as the store opens it (with `log`, when given). */
export async function emptyDatabase(
  backend: StoreBackend = SQLITE,
  log?: (event: { level: string; query: { sql: string; parameters: readonly unknown[] } }) => void,
): Promise<{ db: Kysely<Database>; url?: string; dispose(): Promise<void> }> {
  const database = await backend.create();
  const url = database.where.databaseUrl;
  try {
    const db = url
      ? await openPostgresDatabase(url, { log })
      : new Kysely<Database>({
          dialect: new SqliteDialect({ database: new BetterSqlite3(join(database.dir!, 'test.db')) }),
          log,
        });
    return {
      db,
      url,
      async dispose() {
        await db.destroy();
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/**
 * A migrated database of `backend` whose every query is recorded, to check what a save writes
 * (and what it reads on a cache hit). SQLite's is a plain connection, without the statement
 * cache; PostgreSQL's the store's own pool on a new schema.
 */
export async function recordingDatabase(
  backend: StoreBackend = SQLITE,
): Promise<{ db: Kysely<Database>; url?: string; queries: RecordedQuery[]; dispose(): Promise<void> }> {
  const queries: RecordedQuery[] = [];
  const { db, url, dispose } = await emptyDatabase(backend, (event) => {
    if (event.level === 'query') queries.push({ sql: event.query.sql, parameters: event.query.parameters });
  });
  await migrateToLatest(db);
  queries.length = 0;
  return { db, url, queries, dispose };
}

/** Links `childId` to `parentId` as a sub-task start does, without storing the child task itself. */
export function linkSubtask(
  state: SqlTaskStateStore,
  db: Kysely<Database>,
  parentId: string,
  childId: string,
  model = 'builtin:echo',
): Promise<void> {
  return state.writeSubtask(parentId, childId, model, (writes) => db.transaction().execute(writes));
}
