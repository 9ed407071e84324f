import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Requirement } from '../needs.js';
import { SCHEMA_PREFIX } from './processes.js';
import { WAIT_MS } from './wait.js';

/**
 * PostgreSQL for the tests: the server named by `TINY_HARNESS_TEST_DATABASE_URL`, where every
 * test makes a schema of its own and drops it, so that runs and tests never see each other.
 * Without the variable, the suites that need it are skipped (`needs(POSTGRES)`) with the hint
 * below; `.ci/run` sets it, so CI runs them.
 */

export const TEST_DATABASE_URL_VARIABLE = 'TINY_HARNESS_TEST_DATABASE_URL';

export const POSTGRES: Requirement = {
  name: 'PostgreSQL',
  install: `${TEST_DATABASE_URL_VARIABLE}=postgres://postgres@127.0.0.1:5432/test npm test (any database the tests may create schemas in)`,
  present: () => Boolean(process.env[TEST_DATABASE_URL_VARIABLE]),
};

export interface TempSchema {
  /** The schema's name. */
  schema: string;
  /** The test database's URL, with the schema as its search path: hand it to the store or a harness process. */
  url: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/**
 * A new, empty schema in the test database, or in the database at `options.baseUrl` (the
 * benchmarks' own: bench/lib/postgres.ts), named `<prefix>_<random>`; by default the prefix
 * names the test run, whose runner drops what a cancelled file left.
 */
export async function tempSchema(options: { baseUrl?: string; prefix?: string } = {}): Promise<TempSchema> {
  const base = options.baseUrl ?? process.env[TEST_DATABASE_URL_VARIABLE];
  if (!base) throw new Error(`${TEST_DATABASE_URL_VARIABLE} is not set`);
  const schema = `${options.prefix ?? SCHEMA_PREFIX}_${randomBytes(6).toString('hex')}`;
  await withClient(base, (client) => client.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    schema,
    url: url.toString(),
    drop: () =>
      withClient(base, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined),
  };
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Runs `work` on a connection of its own to `url`, then closes it. */
export async function withDb<T>(url: string, work: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    return await work(db);
  } finally {
    await db.end();
  }
}

/** A table lock held by a transaction of its own, until `release` (idempotent; it closes the connection). */
export interface HeldLock {
  release(): Promise<void>;
}

/**
 * Locks `table` in `mode` (`LOCK TABLE … IN <mode> MODE`) from a connection of its own, so that a
 * test can stop the harness at the statement that needs it. Bounded as every wait of the tests
 * is: a lock that cannot be had within `WAIT_MS` fails, naming the table.
 */
export async function lockTable(url: string, table: string, mode: string): Promise<HeldLock> {
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  let held = false;
  const release = async () => {
    if (held) await lock.query('ROLLBACK').catch(() => undefined);
    held = false;
    await lock.end().catch(() => undefined);
  };
  try {
    await lock.query('BEGIN');
    held = true;
    await lock.query(`SET LOCAL lock_timeout = ${WAIT_MS}`);
    await lock.query(`LOCK TABLE ${table} IN ${mode} MODE`);
  } catch (error) {
    await release();
    throw new Error(`could not lock ${table} (${mode})`, { cause: error });
  }
  return { release };
}
