/**
 * The delay from a write of a task's event on one instance to its delivery to a reader of the
 * task on another, through PostgreSQL, on loopback: the part of issue 10's cross-instance delay
 * (a command sent to B until its reply is seen in A's stream, goal at most 5 ms at the median)
 * that crossing instances adds.
 *
 *   node --import tsx bench/coordination-latency.ts [--events N] [--database URL]
 *
 * 1. Makes a schema of its own in the database (`--database`, else TINY_HARNESS_TEST_DATABASE_URL,
 *    else postgres://postgres@127.0.0.1:5432/test), migrates it, and opens two instances, A and
 *    B, as the harness opens one: a store (`openStore`) and its coordination
 *    (`openSharedCoordination`), each with pools of its own. Both run in this process, so one
 *    clock times both ends; each end's work still crosses the database.
 * 2. Baseline, in the same run: a bare `pg_notify` from a pooled connection until a LISTENing
 *    client hears it, one at a time: the floor any NOTIFY-based delivery stands on.
 * 3. One at a time: A publishes a command-reply-sized status update of a task to a `TurnWriter`,
 *    which appends it (`SqlTaskStore.append`), as the engine writes a turn's events: the task row
 *    and the log row in one transaction, then the wake-up; B's reader of the task
 *    (`TaskFeeds.follow`) receives it, then the next: N (default 1000) timed after 100 warm-up.
 *    Before the engine's log this was `publish` and `handOn` on A's coordination, which wrote
 *    the task's row and the event likewise.
 * 4. Burst: A publishes N events at once (the writer appends those published while a write is
 *    under way in its next one); each one's delay from its publish to its delivery.
 * The schema is dropped at the end. A measurement, not a test.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { TaskState, TaskStatusUpdateEvent, type Task } from '@a2a-js/sdk';
import { ServerCallContext, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { createLogger } from '../src/log.js';
import { TurnWriter } from '../src/runtime/turn/turn-writer.js';
import { migrateToLatest, openStore, type Database, type Store } from '../src/store/index.js';
import { openPostgresDatabase } from '../src/store/postgres-database.js';
import { DEFAULT_LEASE_MS } from '../src/coordination/postgres-coordination.js';
import { openSharedCoordination } from '../src/coordination/shared-coordination.js';
import { header, latencyLine, ms, summarize, verdict, versionOf } from './lib/report.js';
import type { Coordination, LogSubscription } from '../src/ports.js';

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

const TASK_ID = randomUUID();
const CONTEXT_ID = randomUUID();

/** A status update the size of a short command reply, numbered in its metadata. */
function event(n: number): AgentExecutionEvent {
  return {
    kind: 'statusUpdate',
    data: TaskStatusUpdateEvent.fromJSON({
      taskId: TASK_ID,
      contextId: CONTEXT_ID,
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
const admin = await openPostgresDatabase(url.toString(), { maxConnections: 4 });
const instances: Array<{ store: Store; coordination?: Coordination }> = [];
const subscriptions: LogSubscription[] = [];
try {
  await migrateToLatest(admin);
  const log = createLogger();
  /** One instance as the harness opens it: its store, then its coordination. */
  const instance = async () => {
    const instanceId = randomUUID();
    const opened: { store: Store; coordination?: Coordination } = {
      store: await openStore({
        databaseUrl: url.toString(),
        instanceId,
        onFeedError: (failure, what) => console.error(`feed error: ${what}: ${String(failure)}`),
      }),
    };
    instances.push(opened);
    opened.coordination = await openSharedCoordination(url.toString(), opened.store, instanceId, DEFAULT_LEASE_MS, log);
    return opened.store;
  };
  const a = await instance();
  const b = await instance();
  const context = new ServerCallContext();
  const task: Task = {
    id: TASK_ID,
    contextId: CONTEXT_ID,
    status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [],
    metadata: {},
  };
  await a.tasks.create(task, context);
  const { rows } = await sql<{ version: string }>`select version()`.execute(admin);
  header('Cross-instance delivery through PostgreSQL (SqlTaskStore.append on A, TaskFeeds.follow on B)', [
    `${rows[0]!.version.split(' on ')[0]}, pg ${versionOf('pg')}; two instances in one process, each a store and a coordination (pools of their own, a LISTEN connection)`,
    `${N} events timed after ${WARM_UP} warm-up; delays from publish() to A's TurnWriter (SqlTaskStore.append) to delivery on B`,
  ]);

  await notifyBaseline(url.toString(), admin, WARM_UP);
  const baseline = report('baseline: bare pg_notify → LISTEN', await notifyBaseline(url.toString(), admin, N));

  let onDelivered: (n: number) => void = () => undefined;
  const subscription = await b.feeds.follow(TASK_ID);
  subscriptions.push(subscription);
  const reading = (async () => {
    for (let entry = await subscription.next(); entry; entry = await subscription.next())
      onDelivered(numberOf(entry.event));
  })();

  const writer = new TurnWriter(
    (events) => a.tasks.append(TASK_ID, context, events),
    (failure) => console.error(`append failed: ${String(failure)}`),
  );
  const oneAtATime: number[] = [];
  const committed: number[] = [];
  for (let n = 0; n < WARM_UP + N; n++) {
    const arrived = new Promise<void>((resolve) => (onDelivered = (got) => got === n && resolve()));
    const start = performance.now();
    writer.publish(event(n));
    const appended = writer.flushed().then(() => performance.now() - start);
    await arrived;
    const delay = performance.now() - start;
    if (n >= WARM_UP) {
      oneAtATime.push(delay);
      committed.push(await appended);
    } else await appended;
  }
  const median = report('one at a time: publish → deliver', oneAtATime);
  const commitMedian = report('  of which the append on A (committed)', committed);

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
    writer.publish(event(n));
  }
  await allArrived;
  await writer.flushed();
  if (writer.failed) throw writer.failed.error;
  const burstSeconds = (performance.now() - burstStart) / 1000;
  report(`burst of ${N}: publish → deliver`, burst);
  console.log(`  burst throughput: ${(N / burstSeconds).toFixed(0)} events/s from A to B`);
  subscription.close();
  await reading;

  console.log(
    `  crossing's own cost over bare NOTIFY (median; publish → deliver less the append's commit, less the baseline): ${ms(median - commitMedian - baseline).trim()}`,
  );
  verdict(
    median <= 5,
    `one event from A to B at most 5 ms at the median (issue 10's cross-instance goal): ${ms(median).trim()}`,
  );
} finally {
  for (const subscription of subscriptions) subscription.close();
  for (const { coordination } of instances) await coordination?.close();
  for (const { store } of instances) await store.close();
  await admin.destroy();
  await withClient(BASE_URL, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
}
