/**
 * PostgreSQL for the benchmarks: the server named by TINY_HARNESS_BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test), where each benchmark makes a schema of its own
 * (test/support/postgres.ts `tempSchema`) and drops it when it ends, Ctrl+C included. A machine
 * without PostgreSQL is no failure: the benchmark says so and exits 0.
 */
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { describeDatabaseUrl } from '../../src/store/index.js';
import { tempSchema, type TempSchema } from '../../test/support/postgres.js';
import { onInterrupt } from './cleanup.js';

export const BENCH_DATABASE_URL_VARIABLE = 'TINY_HARNESS_BENCH_DATABASE_URL';
const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';
const CONNECT_TIMEOUT_MS = 3_000;

export interface BenchSchema extends TempSchema {
  /** The server's version line, e.g. "PostgreSQL 15.20". */
  version: string;
  /** Where it runs, without any password: for the header. */
  where: string;
}

/**
 * A fresh schema for this benchmark, dropped by `drop()` (or on Ctrl+C). When the server cannot
 * be reached, prints "SKIPPED: needs PostgreSQL" with how to point the benchmark at one, and
 * exits 0.
 */
export async function benchSchema(benchmark: string): Promise<BenchSchema> {
  const baseUrl = process.env[BENCH_DATABASE_URL_VARIABLE] || DEFAULT_URL;
  const where = describeDatabaseUrl(baseUrl);
  let version: string;
  try {
    version = await serverVersion(baseUrl);
  } catch (error) {
    console.log(
      `${benchmark}: PostgreSQL at ${where} cannot be reached (${(error as Error).message || String(error)}).`,
    );
    console.log(
      `  SKIPPED: needs PostgreSQL (${benchmark}; set ${BENCH_DATABASE_URL_VARIABLE}=postgres://USER@HOST:PORT/DB, a database it may create schemas in)`,
    );
    process.exit(0);
  }
  const schema = await tempSchema({ baseUrl, prefix: 'th_bench' });
  let dropped: Promise<void> | undefined;
  const drop = () => (dropped ??= schema.drop());
  const forget = onInterrupt(drop);
  return {
    ...schema,
    version,
    where,
    drop: () => drop().finally(forget),
  };
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ version: string }>('select version()');
    return rows[0]!.version.split(' on ')[0]!;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux Node runs on). */
const TICKS_PER_SECOND = 100;

/**
 * CPU milliseconds (user + system) all processes named `postgres` on this machine have used so
 * far, from /proc; undefined where there is no /proc. With SQLite the store's work is in the
 * harness's own CPU time; with PostgreSQL much of it is in the server's backends, so a fair
 * "CPU per request" adds this. Anything else using the same server meanwhile counts too.
 */
export function postgresCpuMs(): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  let ticks = 0;
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid ...": comm may hold spaces, so fields are counted after its ')'.
    const close = stat.lastIndexOf(')');
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
    const fields = stat.slice(close + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the comm.
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
