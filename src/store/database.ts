import { accessSync, constants } from 'node:fs';
import type { ScheduleRunsTable, SchedulesTable } from './schedule-tables.js';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, type ColumnType } from 'kysely';
import { timedTransactions, type TransactionListener } from './timed-transactions.js';
import { HarnessError } from '../errors.js';
import { describeError } from '../log.js';
import { makeFolder, whyNoFolder } from '../make-folder.js';

/**
 * The store's tables as kysely sees them and how to open a SQLite database (both engines are
 * migrated by `migrations/runner.ts`). Queries elsewhere in `store/` are written against these types with portable
 * kysely builders only, so they run on SQLite and on PostgreSQL (`postgres-database.ts`) alike.
 */

/** A 64-bit counter: both engines' drivers read it as a number (`postgres-database.ts`). */
export type Counter = ColumnType<number | string, number, number>;

/** One row per task: what an event replaces as a whole. */
export interface TasksTable {
  id: string;
  context_id: string;
  tenant: string;
  owner: string;
  /** `TaskState` as its number (the SDK's enum is numeric). */
  state: number;
  /** `TaskStatus.toJSON`, or null when the task has no status. */
  status_json: string | null;
  metadata_json: string;
  /** The status timestamp as given, '' when missing: list order and page tokens use it. */
  status_timestamp: string;
  status_time_ms: number | null;
  created_at: string;
  updated_at: string;
  /**
   * How many times the row was updated (0 when inserted): instances sharing the database tell
   * by it whether an image they keep in memory is still the stored task (`task-images.ts`).
   */
  version: ColumnType<number, number | undefined, number>;
  /**
   * The generation of the task: the number of its last event in `task_events` (1: created),
   * set in the transaction that appends the event. A reader that reads the task starts the log
   * after it, so that it is sent each event once and misses none (`task-log.ts`).
   */
  generation: ColumnType<number, number | undefined, number>;
  /**
   * Shared: the epoch of the last turn lease whose turn wrote the task, or that a sweeper gave
   * it when taking it from a dead instance; a turn's write under a lower epoch is refused
   * (`task-images.ts`). Always 0 on SQLite.
   */
  fence_epoch: ColumnType<number, number | undefined, number>;
}

/** History, append-only: one row per message, in the order the store first saw them. */
export interface TaskMessagesTable {
  task_id: string;
  seq: number;
  message_id: string;
  message_json: string;
}

/** An artifact without its parts (`Artifact.toJSON` with `parts: []`). */
export interface TaskArtifactsTable {
  task_id: string;
  artifact_id: string;
  seq: number;
  header_json: string;
}

/** An artifact's parts, appended by sequence number as chunks stream in. */
export interface ArtifactPartsTable {
  task_id: string;
  artifact_id: string;
  seq: number;
  part_json: string;
}

export interface TaskSettingsTable {
  task_id: string;
  model: string;
}

/** The model a user last chose in a context (contexts are named by clients, so per user). */
export interface ContextModelsTable {
  tenant: string;
  owner: string;
  context_id: string;
  model: string;
}

export interface TaskUsageTable {
  task_id: string;
  model: string;
  input_tokens: Counter;
  output_tokens: Counter;
  /** Position of the model among the task's models, by first use. */
  first_seq: number;
}

/** A task's last model call (0017). */
export interface TaskLastUsageTable {
  task_id: string;
  model: string;
  input_tokens: Counter;
  output_tokens: Counter;
}

/**
 * One message a user sent (CMD-34), by id and content: recorded before the message is processed
 * when instances share the database, as it is accepted when one process has it
 * (`SqlMessageClaimStore`); pruned once older than the retention time.
 */
export interface MessageClaimsTable {
  tenant: string;
  owner: string;
  message_id: string;
  /** SHA-256 of the message's content (`contentDigest`). */
  digest: string;
  /** The task the message went to; null until the message is accepted. */
  task_id: string | null;
  /** A command's reply, `TaskStatusUpdateEvent.toJSON`; null for an ordinary message. */
  reply_json: string | null;
  /** The instance that made the claim (`Coordination.instanceId`); null for claims from before 0008. */
  claimant: string | null;
  /** When the claim was made (ms since the epoch, the instance's clock): what pruning goes by. */
  created_ms: Counter;
}

export interface TaskLinksTable {
  child_id: string;
  parent_id: string;
  /** Start order among the parent's sub-tasks. */
  seq: number;
}

/** One running instance sharing the database; the row goes when it closes or is taken for dead. */
export interface InstancesTable {
  id: string;
  /** When the instance last showed it was alive: ms since the epoch, by PostgreSQL's clock. */
  heartbeat: Counter;
}

/** The instance running a task's one turn; no row when no turn runs. */
export interface TurnLeasesTable {
  task_id: string;
  instance_id: string;
  /** From one sequence: greater than every earlier lease's, of any task, on any instance. */
  epoch: ColumnType<number, number | undefined, never>;
}

/** The instance delivering a (task, config) pair's push notifications; no row when none does. */
export interface PushLeasesTable {
  task_id: string;
  config_id: string;
  instance_id: string;
}

/** A task's ordered event log (`task-log.ts`): every change to the task, by generation, kept for minutes. */
export interface TaskEventsTable {
  task_id: string;
  /** The task's generation after the event: 1 for the task's creation, then one more per event. */
  generation: Counter;
  /** `StreamResponse.toJSON` of the event (`event-codec.ts`). */
  event_json: string;
  /** When it was stored, ms since the epoch by the writer's clock: pruning goes by it. */
  created_ms: Counter;
}

/** A task's push-notification config (`push-store.ts`), of the task's user. */
export interface PushConfigsTable {
  task_id: string;
  config_id: string;
  tenant: string;
  owner: string;
  url: string;
  token: string;
  /** `AuthenticationInfo` as JSON, or null. */
  auth_json: string | null;
  created_ms: Counter;
}

/** A delivery owed to a config: one event of its task, written with the event (the outbox). */
export interface PushDeliveriesTable {
  task_id: string;
  config_id: string;
  generation: Counter;
  /** `StreamResponse.toJSON` of the event, as `task_events` holds it. */
  event_json: string;
  state: 'pending' | 'failed';
  attempts: Counter;
  /** When it is due, ms since the epoch (0 for a new one: at once); once failed, when its last attempt was (pruning goes by it). */
  next_attempt_ms: Counter;
  /** When it was first tried, ms since the epoch; null before. */
  first_attempt_ms: Counter | null;
  last_error: string | null;
}

/** A message waiting in its task's queue (`task-queue.ts`). */
export interface TaskQueueTable {
  task_id: string;
  /** Its place: the head has the least. */
  seq: Counter;
  message_id: string;
  message_json: string;
  tenant: string;
  owner: string;
  /** 1 when the request that queued it was authenticated. */
  authenticated: number;
  created_ms: Counter;
}

/** A tool a user allowed for good in a context (0018, TOOL-5). */
export interface ToolGrantsTable {
  tenant: string;
  owner: string;
  context_id: string;
  tool: string;
  granted_at: string;
}

export interface Database {
  tasks: TasksTable;
  task_messages: TaskMessagesTable;
  task_artifacts: TaskArtifactsTable;
  artifact_parts: ArtifactPartsTable;
  task_settings: TaskSettingsTable;
  context_models: ContextModelsTable;
  task_usage: TaskUsageTable;
  task_last_usage: TaskLastUsageTable;
  message_claims: MessageClaimsTable;
  task_links: TaskLinksTable;
  instances: InstancesTable;
  turn_leases: TurnLeasesTable;
  push_leases: PushLeasesTable;
  task_events: TaskEventsTable;
  push_configs: PushConfigsTable;
  push_deliveries: PushDeliveriesTable;
  task_queue: TaskQueueTable;
  tool_grants: ToolGrantsTable;
  schedules: SchedulesTable;
  schedule_runs: ScheduleRunsTable;
}

/**
 * What a commit promises once it returns (and the harness acknowledges what it stored):
 * - `normal`: SQLite's `synchronous = NORMAL` in WAL mode. A commit is in the WAL file but
 *   not yet flushed to the disk: it survives the process being killed or crashing at any
 *   moment, but a power cut or an operating-system crash may lose the last commits (never
 *   corrupting the file). The WAL is flushed at checkpoints.
 * - `full`: `synchronous = FULL`. Every commit is flushed to the disk (fsync) before it
 *   returns, so it survives a power cut too, at the cost of one flush per commit.
 */
export type Durability = 'normal' | 'full';

const SYNCHRONOUS: Record<Durability, string> = { normal: 'NORMAL', full: 'FULL' };

/**
 * Opens (creating it and its folder when missing) a SQLite database file for the store.
 * WAL lets readers run beside the writer; `synchronous` follows `durability` (default
 * `normal`, see `Durability`); `busy_timeout` waits for another connection's lock instead of
 * failing at once; foreign keys are off in SQLite unless asked for.
 */
export function openSqliteDatabase(
  file: string,
  durability: Durability = 'normal',
  onTransaction?: TransactionListener,
): Kysely<Database> {
  const synchronous = SYNCHRONOUS[durability];
  if (!Object.hasOwn(SYNCHRONOUS, durability))
    throw new HarnessError('store_failed', `Unknown durability "${String(durability)}": use "normal" or "full".`);
  const folder = dirname(file);
  try {
    makeFolder(folder);
    accessSync(folder, constants.W_OK);
  } catch (error) {
    throw new HarnessError('data_unusable', `Cannot use the data folder ${folder}: ${whyUnusable(error)}.`, {
      cause: error,
    });
  }
  const Sqlite = loadBetterSqlite3();
  let sqlite: BetterSqlite3.Database | undefined;
  try {
    sqlite = new Sqlite(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma(`synchronous = ${synchronous}`);
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    sqlite?.close();
    throw openFailure(file, error);
  }
  const dialect = new SqliteDialect({ database: withStatementCache(sqlite) });
  return new Kysely<Database>({ dialect: timedTransactions(dialect, onTransaction) });
}

/**
 * The driver, loaded when a SQLite database is opened (never on PostgreSQL), with `require`: an
 * ES import of this CommonJS package has Node lex it for its exports first, which took about
 * 40 ms of start-up (bench/RESULTS.md, "Start-up").
 */
function loadBetterSqlite3(): typeof BetterSqlite3 {
  return createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
}

/**
 * Why the database file could not be opened. The driver first: better-sqlite3 is compiled for one
 * Node.js version, and under another (after switching from 20 to 24) loading it fails before
 * any file is touched, which is no fault of the data folder.
 */
export function openFailure(file: string, error: unknown): HarnessError {
  const code = (error as { code?: unknown }).code;
  if (code === 'ERR_DLOPEN_FAILED')
    return new HarnessError(
      'store_failed',
      `The SQLite driver (better-sqlite3) was built for another version of Node.js than this one (${process.version}): run \`npm rebuild better-sqlite3\` with this Node.js, in the folder tiny-harness is installed in.`,
      { cause: error },
    );
  const why =
    code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT'
      ? 'it is not a SQLite database (move it away, and the harness starts a new one)'
      : whyUnusable(error);
  return new HarnessError('data_unusable', `Cannot open the database file ${file}: ${why}.`, { cause: error });
}

/** Why a folder or file cannot be used, in words; never the underlying message, which may hold other paths. */
function whyUnusable(error: unknown): string {
  switch ((error as { code?: unknown }).code) {
    case 'SQLITE_CANTOPEN':
    case 'SQLITE_READONLY':
    case 'SQLITE_PERM':
      return 'permission denied';
    case 'SQLITE_FULL':
      return 'the disk is full';
    case 'EISDIR':
      return 'a folder stands where the file is needed';
    default:
      return whyNoFolder(error) ?? describeError(error);
  }
}

/** Distinct SQL texts kept prepared; the store issues a few dozen. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * kysely's SQLite driver prepares a statement for every query it runs, and preparing costs
 * more than running the store's small inserts and updates (a tenth of a streamed turn's CPU).
 * The store sends the same few SQL texts again and again, so prepared statements are kept by
 * their text, least recently used dropped first. Safe because kysely runs one query at a time
 * on the connection and the store never streams a query (an iterating statement is busy).
 */
function withStatementCache(sqlite: BetterSqlite3.Database): Pick<BetterSqlite3.Database, 'prepare' | 'close'> {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare: (source: string) => {
      let statement = statements.get(source);
      if (statement) {
        statements.delete(source);
      } else {
        statement = sqlite.prepare(source);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      }
      statements.set(source, statement);
      return statement;
    },
  } as Pick<BetterSqlite3.Database, 'prepare' | 'close'>;
}
