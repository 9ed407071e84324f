import pg from 'pg';
import {
  Kysely,
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type LogConfig,
  type PostgresPool,
  type PostgresPoolClient,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';
import { HarnessError } from '../errors.js';
import { describeError } from '../log.js';
import { RETRY_DELAYS_MS, untilDone } from '../until-done.js';
import type { Database } from './database.js';
import { describeDatabaseUrl, isPostgresUrl } from './database-url.js';
import { timedTransactions, type TransactionListener } from './timed-transactions.js';

/**
 * Opening the store's database on a PostgreSQL server, for several harness processes sharing
 * one database (`tiny-harness serve --database postgres://...`). The URL may hold a password,
 * so it is never logged or put in an error: `describeDatabaseUrl` is what may be shown. This
 * module loads `pg`, so the store imports it only when a URL is given: SQLite alone starts
 * without it.
 */

export interface PostgresDatabaseOptions {
  /** The most connections this process opens (pg's pool; default 10). */
  maxConnections?: number;
  /** The instance the connections are for: `pg_stat_activity` shows `applicationName(instanceId)` (unless the URL sets `application_name`). */
  instanceId?: string;
  /**
   * Called when an idle pooled connection fails (the server restarted, the network went away).
   * pg drops that connection and opens another for the next query; without a listener the
   * failure would end the process. Default: ignored, as the next query that fails says why.
   */
  onConnectionError?: (error: Error) => void;
  /** How long opening a connection may take before the query that needs it fails; default 10 s. */
  connectTimeoutMs?: number;
  /** kysely's query log, for tests that check what is sent. */
  log?: LogConfig;
  /**
   * How long a transaction of these connections may wait for its next statement before the
   * server ends it with its connection (`idle_in_transaction_session_timeout`, see
   * `sessionSettings`); default 10 s, the default lease.
   */
  idleInTransactionMs?: number;
  /** Told of each transaction's end (the store's metrics). */
  onTransaction?: TransactionListener;
}

const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_IN_TRANSACTION_MS = 10_000;

/**
 * The session settings of every harness connection to PostgreSQL, as `pg.Client` takes them.
 *
 * `idle_in_transaction_session_timeout`, set to the instances' lease time: the harness's
 * transactions run their statements back to back, milliseconds apart, so one left waiting that
 * long belongs to a process that stopped running (SIGSTOP, a frozen VM, a stalled event loop,
 * whose heartbeats have stopped too). Its row locks would hold back the instance taking its turns
 * over (`takeOverInstance` raises the fences of those tasks' rows) and every write of those
 * tasks, for as long as the process stays stopped; the server ends the transaction instead, and
 * the takeover waits at most about one lease more. Shorter would end a live transaction of a
 * busy instance that no one needs to take over yet; a statement waiting on a lock or on a slow
 * disk is active, not idle, so a stalled database never trips it.
 */
export function sessionSettings(idleInTransactionMs = IDLE_IN_TRANSACTION_MS): {
  idle_in_transaction_session_timeout: number;
} {
  return { idle_in_transaction_session_timeout: idleInTransactionMs };
}

/** The SQL type ids of `bigint` (int8) and of `count(*)`'s result. */
const INT8_OID = 20;

/**
 * pg reads `bigint` as a string, since it can pass 2^53. The store's bigints (token counters,
 * milliseconds since the epoch) and counts stay far below that, and SQLite reads them as
 * numbers: read as numbers here too, so every query answers the same on both engines.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Opens a pool of connections to the PostgreSQL database at `url` and checks that it answers,
 * so that a wrong URL or a server that is down stops start-up with a clear `store_failed`
 * error naming the database (`describeDatabaseUrl`), never the URL itself.
 */
export async function openPostgresDatabase(
  url: string,
  options: PostgresDatabaseOptions = {},
): Promise<Kysely<Database>> {
  if (!isPostgresUrl(url) || !URL.canParse(url)) {
    throw new HarnessError(
      'store_failed',
      'The database URL must be a PostgreSQL URL such as postgres://user@host:5432/database.',
    );
  }
  const connectionTimeoutMillis = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const application_name = options.instanceId && applicationName(options.instanceId);
  const settings = sessionSettings(options.idleInTransactionMs);
  // The timeout goes to each connection, not to the pool: the pool would apply it to a query
  // waiting for a free connection too, which under load is a wait, not a failure.
  const Client = class extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, ...settings, connectionTimeoutMillis, application_name });
      // A connection that fails while checked out (the server ended it, the network went away)
      // emits 'error', which pg's pool listens for on idle connections only: unheard, it would
      // end the process. Its statement fails with the error instead, and the pool drops it.
      this.on('error', () => undefined);
    }
  };
  const pool = new pg.Pool({ connectionString: url, max: options.maxConnections, types, Client });
  pool.on('error', options.onConnectionError ?? (() => undefined));
  const db = new Kysely<Database>({
    dialect: timedTransactions(
      new SearchPathDialect({ pool: discardingFailedConnections(pool) }),
      options.onTransaction,
    ),
    log: options.log,
  });
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw new HarnessError(
      'store_failed',
      `Cannot use the PostgreSQL database ${describeDatabaseUrl(url)}: ${connectFailure(error)}.`,
      { cause: error },
    );
  }
  return db;
}

/**
 * The pool as kysely uses it, each checked-out connection wrapped: a statement whose connection
 * failed (ended by the server or a pooler, cut by the network) rejects with a `store_failed`
 * error that says so, and the connection is discarded when released (`release(true)`), never
 * handed to the next statement. The server ends an open transaction with its connection.
 *
 * A read on its own (a `select` that is the first statement of its checkout: a transaction's is
 * `begin`) is sent again on a new connection instead, after the waits a turn's end is tried again
 * with (`untilDone`), through them once: it changed nothing, so sending it again is safe, and a
 * reset pool (a restart, `pg_terminate_backend`) fails every statement in flight while the next
 * ones succeed. A write is not: it may have been committed before the answer was lost.
 */
function discardingFailedConnections(pool: pg.Pool): PostgresPool {
  return {
    async connect() {
      let client: pg.PoolClient | undefined = await pool.connect();
      let failed = false;
      let statements = 0;
      const send = (text: string, parameters: readonly unknown[]) =>
        client!.query(text, [...parameters]).catch((error: unknown) => {
          if (isConnectionFailure(error)) failed = true;
          throw error;
        });
      /** The read sent again: on a new connection, once the one it failed on is discarded. */
      const read = async (text: string, parameters: readonly unknown[]) => {
        if (failed) {
          client?.release(true);
          client = undefined;
          client = await pool.connect();
          failed = false;
        }
        return send(text, parameters);
      };
      const query = (text: string, parameters: readonly unknown[]) => {
        const alone = statements++ === 0 && /^\s*select\b/i.test(text);
        const sent = alone
          ? untilDone(() => read(text, parameters), {
              // A pool that is closing (the store is) opens no connection again.
              giveUp: (error, failures) =>
                !isConnectionFailure(error) || failures > RETRY_DELAYS_MS.length || pool.ending,
            })
          : send(text, parameters);
        return sent.catch((error: unknown) => {
          if (!isConnectionFailure(error)) throw error;
          failed = true;
          throw new HarnessError(
            'store_failed',
            `The PostgreSQL connection failed before the statement was answered: ${describeError(error)}`,
            { cause: error },
          );
        });
      };
      // Only the (text, parameters) form: kysely passes a cursor only when configured with one.
      return {
        query: query as unknown as PostgresPoolClient['query'],
        release: (destroy) => client?.release(destroy || failed),
      };
    },
    end: () => pool.end(),
  };
}

/**
 * An error that is not the server's answer to a statement (the socket closed, the client is no
 * longer usable), or one of the server's about the connection itself: connection exceptions
 * (class 08) and the server or an administrator ending it (57P01-57P03).
 */
function isConnectionFailure(error: unknown): boolean {
  return !(error instanceof pg.DatabaseError) || /^(08|57P0[1-3])/.test(error.code ?? '');
}

/** What an instance's connections are called in `pg_stat_activity`, for whoever looks at (or ends) them. */
export function applicationName(instanceId: string): string {
  return `tiny-harness ${instanceId}`;
}

/** Why connecting failed, in words that say what to check. */
function connectFailure(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'the connection was refused (is the server running, on that port?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name is unknown';
    case 'ETIMEDOUT':
      return 'the server did not answer';
    case '28P01':
    case '28000':
      return 'the server refused the user or password';
    case '3D000':
      return 'the database does not exist';
    default:
      return /timeout/i.test(String((error as Error)?.message))
        ? 'the server did not answer in time'
        : describeError(error);
  }
}

/** The URL with `-c name=value` added to the session options it names (keeping a search path given there). */
export function withSessionSetting(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  const options = parsed.searchParams.get('options');
  parsed.searchParams.set('options', `${options ? `${options} ` : ''}-c ${name}=${value}`);
  return parsed.toString();
}

/**
 * PostgreSQL as kysely speaks it, but introspecting only the schema of the search path. kysely's
 * own introspector (which its migrator asks whether its tables exist, at every start) reads every
 * table of every schema in the database, in one query that fails ("schema ... does not exist")
 * when another schema is dropped meanwhile, and grows with the database's other schemas.
 */
class SearchPathDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SearchPathIntrospector(db);
  }
}

class SearchPathIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(this.db);
    return rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ schema: string; name: string; is_view: boolean }>`
      select table_schema as schema, table_name as name, table_type = 'VIEW' as is_view
      from information_schema.tables where table_schema = current_schema()`.execute(this.db);
    return rows.map((row) => ({ schema: row.schema, name: row.name, isView: row.is_view, columns: [] }));
  }

  async getMetadata(): Promise<{ tables: TableMetadata[] }> {
    return { tables: await this.getTables() };
  }
}
