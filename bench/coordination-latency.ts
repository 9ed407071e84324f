/**
 * The delay from `publish` on one instance to `deliver` on another through PostgreSQL, on
 * loopback: the part of issue 10's cross-instance delay (a command sent to B until its reply
 * is seen in A's stream, goal at most 5 ms at the median) that coordination adds.
 *
 *   node --import tsx bench/coordination-latency.ts [--events N] [--database URL]
 *
 * 1. Makes a schema of its own in the database (`--database`, else TINY_HARNESS_TEST_DATABASE_URL,
 *    else postgres://postgres@127.0.0.1:5432/test), migrates it, and starts two
 *    `PostgresCoordination`s, A and B, each with a pool of its own. Both run in this process, so
 *    one clock times both ends; each end's work still crosses the database.
 * 2. Baseline, in the same run: a bare `pg_notify` from a pooled connection until a LISTENing
 *    client hears it, one at a time: the floor any NOTIFY-based delivery stands on.
 * 3. One at a time: A publishes a command-reply-sized status update and hands it on (as a
 *    write of the store does), B's follower receives it,
 *    then the next: N (default 1000) timed after 100 warm-up.
 * 4. Burst: A publishes N events at once; each one's delay from its publish to its delivery.
 * The schema is dropped at the end. A measurement, not a test.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { migrateToLatest, TaskEventLog, type Database } from '../src/store/index.js';
import { openPostgresDatabase } from '../src/store/postgres-database.js';
import { schemaChannel } from '../src/store/channels.js';
import { PostgresCoordination } from '../src/store/postgres-coordination.js';
import { header, latencyLine, ms, summarize, verdict, versionOf } from './lib/report.js';

const { values: flags } = parseArgs({
  options: { events: { type: 'string', default: '1000' }, database: { type: 'string' } },
});
const N = Number(flags.events);
const WARM_UP = 100;
const BASE_URL =
  flags.database ?? process.env['TINY_HARNESS_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Nearest-rank p95, which `summarize` does not give. */
function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)]!;
}

function report(label: string, delays: number[]): number {
  const summary = summarize(delays);
  console.log(latencyLine(label, summary, `p95 ${ms(p95(delays)).trim()}`));
  return summary.median;
}

/** A status update the size of a short command reply, numbered in its metadata. */
function event(n: number): AgentExecutionEvent {
  return {
    kind: 'statusUpdate',
    data: TaskStatusUpdateEvent.fromJSON({
      taskId: 'bench-task',
      contextId: 'bench-context',
      status: {
        state: 'TASK_STATE_WORKING',
        message: {
          messageId: `m${n}`,
          role: 'ROLE_AGENT',
          parts: [{ text: 'Model: fixture:small. Tokens used in this task: 1,234 in, 567 out.' }],
        },
        timestamp: new Date().toISOString(),
      },
      metadata: { n },
    }),
  };
}

const numberOf = (delivered: AgentExecutionEvent) => (delivered.data as TaskStatusUpdateEvent).metadata!['n'] as number;

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Bare NOTIFY from a pool to a LISTENing client, one at a time. */
async function notifyBaseline(url: string, db: Kysely<Database>, count: number): Promise<number[]> {
  return withClient(url, async (listener) => {
    await listener.query('LISTEN bench_baseline');
    let heard: (payload: string) => void = () => undefined;
    listener.on('notification', (message) => heard(message.payload ?? ''));
    const delays: number[] = [];
    for (let i = 0; i < count; i++) {
      const arrived = new Promise<string>((resolve) => (heard = resolve));
      const start = performance.now();
      await sql`select pg_notify('bench_baseline', ${String(i)})`.execute(db);
      await arrived;
      delays.push(performance.now() - start);
    }
    return delays;
  });
}

const schema = `th_bench_${randomBytes(6).toString('hex')}`;
await withClient(BASE_URL, (client) => client.query(`CREATE SCHEMA ${schema}`));
const url = new URL(BASE_URL);
url.searchParams.set('options', `-c search_path=${schema}`);
const open = () => openPostgresDatabase(url.toString(), { maxConnections: 4 });
const dbs = [await open(), await open(), await open()] as const;
const [admin, dbA, dbB] = dbs;
const coordinations: PostgresCoordination[] = [];
try {
  await migrateToLatest(admin);
  const onError = (failure: unknown, what: string) => console.error(`coordination error: ${what}: ${String(failure)}`);
  const coordination = async (db: Kysely<Database>) => {
    const instanceId = randomUUID();
    const events = new TaskEventLog(db, instanceId, await schemaChannel(db, 'events'));
    return new PostgresCoordination({ db, url: url.toString(), events, instanceId, onError });
  };
  const a = await coordination(dbA);
  const b = await coordination(dbB);
  coordinations.push(a, b);
  await a.start();
  await b.start();
  const { rows } = await sql<{ version: string }>`select version()`.execute(admin);
  header('Cross-instance delivery through PostgreSQL (PostgresCoordination)', [
    `${rows[0]!.version.split(' on ')[0]}, pg ${versionOf('pg')}; two instances in one process, a pool each (max 4) and a LISTEN connection each`,
    `${N} events timed after ${WARM_UP} warm-up; delays from publish() on A to deliver on B`,
  ]);

  await notifyBaseline(url.toString(), dbA, WARM_UP);
  const baseline = report('baseline: bare pg_notify → LISTEN', await notifyBaseline(url.toString(), dbA, N));

  let onDelivered: (n: number) => void = () => undefined;
  const stopFollowing = await b.follow('bench-task', (delivered) => onDelivered(numberOf(delivered)));

  const oneAtATime: number[] = [];
  for (let n = 0; n < WARM_UP + N; n++) {
    const arrived = new Promise<void>((resolve) => (onDelivered = (got) => got === n && resolve()));
    const start = performance.now();
    a.publish('bench-task', event(n));
    void a.handOn('bench-task');
    await arrived;
    if (n >= WARM_UP) oneAtATime.push(performance.now() - start);
  }
  const median = report('one at a time: publish → deliver', oneAtATime);

  const published: number[] = [];
  const burst: number[] = [];
  const first = WARM_UP + N;
  const allArrived = new Promise<void>((resolve) => {
    onDelivered = (got) => {
      burst.push(performance.now() - published[got - first]!);
      if (burst.length === N) resolve();
    };
  });
  const burstStart = performance.now();
  for (let n = first; n < first + N; n++) {
    published.push(performance.now());
    a.publish('bench-task', event(n));
    void a.handOn('bench-task');
  }
  await allArrived;
  const burstSeconds = (performance.now() - burstStart) / 1000;
  report(`burst of ${N}: publish → deliver`, burst);
  console.log(`  burst throughput: ${(N / burstSeconds).toFixed(0)} events/s from A to B`);
  stopFollowing();

  console.log(`  coordination's own cost over bare NOTIFY (median): ${ms(median - baseline).trim()}`);
  verdict(
    median <= 5,
    `one event from A to B at most 5 ms at the median (issue 10's cross-instance goal): ${ms(median).trim()}`,
  );
} finally {
  for (const coordination of coordinations) await coordination.close();
  for (const db of dbs) await db.destroy();
  await withClient(BASE_URL, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
}
