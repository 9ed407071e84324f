import pg from 'pg';
import { Kysely, PostgresDialect, sql, type LogConfig } from 'kysely';
import { HarnessError } from '../errors.js';
import { describeError } from '../log.js';
import type { Database } from './database.js';
import { describeDatabaseUrl, isPostgresUrl } from './database-url.js';

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
}

const CONNECT_TIMEOUT_MS = 10_000;

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
  // The timeout goes to each connection, not to the pool: the pool would apply it to a query
  // waiting for a free connection too, which under load is a wait, not a failure.
  const Client = class extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis });
    }
  };
  const pool = new pg.Pool({ connectionString: url, max: options.maxConnections, types, Client });
  pool.on('error', options.onConnectionError ?? (() => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: options.log });
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
