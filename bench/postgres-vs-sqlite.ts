/**
 * The harness on PostgreSQL against the harness on SQLite, in the same run: `/status` and a
 * streamed model turn, each on one instance.
 *
 *   node --import tsx bench/postgres-vs-sqlite.ts [--requests 400] [--turns 100] [--rounds 2]
 *
 * Two harness processes, one on a SQLite file, one on a PostgreSQL schema of its own (from
 * TINY_HARNESS_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test), run by
 * turns (`--rounds` rounds, each measuring one then the other) so that the machine's load
 * falls on both alike:
 * - `/status` on one task, blocking, over JSON-RPC with the SDK's client: one client sending one
 *   request at a time, then 16 clients at once; latency, throughput and the server's CPU time
 *   per request;
 * - a streamed turn against a fixture model that sends 50 tokens at once: time to the first
 *   artifact event and to the end of the stream, one turn at a time, each on a new task.
 * No goal in the issue: figures and the ratio PostgreSQL / SQLite.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Client } from '@a2a-js/sdk/client';
import { tempDir } from './lib/cleanup.js';
import { A2A_HEADERS, isTask, parseStreamEvent, postSse, sdkClient, sendText, streamingRequest, type Target } from './lib/clients.js';
import { benchSchema } from './lib/postgres.js';
import { cpuMs, startServer, type ServerProcess } from './lib/processes.js';
import { header, latencyLine, printVerdicts, summarize } from './lib/report.js';
import { numberedReply } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '400' },
    turns: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '2' },
  },
});
const REQUESTS = Number(flags.requests);
const TURNS = Number(flags.turns);
const ROUNDS = Number(flags.rounds);
const CLIENTS = 16;

type Side = 'SQLite' | 'PostgreSQL';
const figures: Record<Side, { one: number[]; many: { perSecond: number[]; cpu: number[] }; oneCpu: number[]; first: number[]; whole: number[] }> = {
  SQLite: { one: [], many: { perSecond: [], cpu: [] }, oneCpu: [], first: [], whole: [] },
  PostgreSQL: { one: [], many: { perSecond: [], cpu: [] }, oneCpu: [], first: [], whole: [] },
};

async function status(client: Client, target: Target): Promise<void> {
  const answer = await sendText(client, '/status', target);
  if (!isTask(answer)) throw new Error('expected the task back');
}

async function measure(side: Side, server: ServerProcess, target: Target): Promise<void> {
  const client = await sdkClient(server.url);
  for (let i = 0; i < 30; i++) await status(client, target);
  let cpu = await server.cpu();
  for (let i = 0; i < REQUESTS; i++) {
    const start = performance.now();
    await status(client, target);
    figures[side].one.push(performance.now() - start);
  }
  figures[side].oneCpu.push(cpuMs(cpu, await server.cpu()) / REQUESTS);

  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => sdkClient(server.url)));
  cpu = await server.cpu();
  const start = performance.now();
  await Promise.all(clients.map(async (c) => {
    for (let i = 0; i < REQUESTS / CLIENTS; i++) await status(c, target);
  }));
  const seconds = (performance.now() - start) / 1000;
  figures[side].many.perSecond.push(REQUESTS / seconds);
  figures[side].many.cpu.push(cpuMs(cpu, await server.cpu()) / REQUESTS);

  for (let i = 0; i < TURNS; i++) {
    let first = NaN;
    const result = await postSse(`${server.url}/a2a/jsonrpc`, streamingRequest('Say something.'), {
      headers: A2A_HEADERS,
      keep: false,
      onEvent: (event) => {
        if (Number.isNaN(first) && parseStreamEvent(event.data).artifactUpdate) first = event.at;
      },
    });
    figures[side].first.push(first - result.start);
    figures[side].whole.push(result.end - result.start);
  }
}

header('The harness on PostgreSQL against the harness on SQLite: /status and a streamed turn');
const schema = await benchSchema();
if (!schema) {
  console.log('  SKIPPED: needs PostgreSQL (set TINY_HARNESS_BENCH_DATABASE_URL)');
  process.exit(0);
}
const model = await startServer({ kind: 'model', reply: numberedReply(50) }, { name: 'model-pg-vs-sqlite' });
const config = { defaultModel: 'fixture:small', detectOllama: false, providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } } };
const servers: Record<Side, ServerProcess> = {
  SQLite: await startServer({ kind: 'harness', dataDir: tempDir('pg-vs-sqlite-sqlite'), config }, { name: 'harness-sqlite' }),
  PostgreSQL: await startServer({ kind: 'harness', dataDir: tempDir('pg-vs-sqlite-pg'), databaseUrl: schema.url, config }, { name: 'harness-postgres' }),
};
try {
  const targets = {} as Record<Side, Target>;
  for (const side of ['SQLite', 'PostgreSQL'] as const) {
    const task = await sendText(await sdkClient(servers[side].url), 'Hello');
    if (!isTask(task)) throw new Error('expected a task');
    targets[side] = { id: task.id, contextId: task.contextId };
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (['SQLite', 'PostgreSQL'] as const) : (['PostgreSQL', 'SQLite'] as const)) await measure(side, servers[side], targets[side]);
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  for (const side of ['SQLite', 'PostgreSQL'] as const) {
    const f = figures[side];
    console.log(`\n${side} (${ROUNDS} rounds)`);
    console.log(latencyLine('/status, 1 client', summarize(f.one)));
    console.log(`  /status, ${CLIENTS} clients: ${mean(f.many.perSecond).toFixed(0)} req/s; server CPU per request ${mean(f.oneCpu).toFixed(2)} ms (1 client), ${mean(f.many.cpu).toFixed(2)} ms (${CLIENTS} clients)`);
    console.log(latencyLine('turn: first token', summarize(f.first)));
    console.log(latencyLine('turn: whole stream (50 tokens)', summarize(f.whole)));
  }
  const ratio = (pick: (side: Side) => number) => (pick('PostgreSQL') / pick('SQLite')).toFixed(2);
  console.log('\nPostgreSQL / SQLite:');
  console.log(`  /status median x${ratio((s) => summarize(figures[s].one).median)}, p99 x${ratio((s) => summarize(figures[s].one).p99)}; throughput at ${CLIENTS} clients x${ratio((s) => mean(figures[s].many.perSecond))}; server CPU per request x${ratio((s) => mean(figures[s].oneCpu))}`);
  console.log(`  turn: first token x${ratio((s) => summarize(figures[s].first).median)}, whole stream x${ratio((s) => summarize(figures[s].whole).median)} (medians)`);
  console.log('  (figures only: the issue sets no goal here)');
} finally {
  await Promise.all([servers.SQLite.close(), servers.PostgreSQL.close(), model.close()]);
  await schema.drop();
}
printVerdicts('postgres-vs-sqlite');
process.exit(0);
