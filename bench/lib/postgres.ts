/**
 * PostgreSQL for the benchmarks: the server named by TINY_HARNESS_BENCH_DATABASE_URL (default
 * the development machine's, postgres://postgres@127.0.0.1:5432/test), a new schema per run,
 * dropped at exit. Returns undefined when the server cannot be reached, so that a benchmark can
 * say it was skipped instead of failing on a machine without PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const BENCH_DATABASE_URL = process.env['TINY_HARNESS_BENCH_DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchSchema {
  /** The database's URL with the schema as its search path. */
  url: string;
  drop(): Promise<void>;
}

export async function benchSchema(): Promise<BenchSchema | undefined> {
  const schema = `th_bench_${randomBytes(6).toString('hex')}`;
  try {
    await withClient((client) => client.query(`CREATE SCHEMA ${schema}`));
  } catch {
    return undefined;
  }
  const url = new URL(BENCH_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), drop: () => withClient((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined) };
}

async function withClient<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
