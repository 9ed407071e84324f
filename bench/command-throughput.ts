/**
 * Commands under concurrency: throughput and latency of blocking `SendMessage` "/status" on
 * existing tasks at 1, 16 and 64 concurrent clients, against the bare SDK's simplest round trip
 * (an executor that answers every message with one fixed `message` event: no task, no store).
 *
 *   node --import tsx bench/command-throughput.ts [--seconds 5] [--warm-up 1] [--levels 1,16,64]
 *
 * Both servers run in child processes (bench/lib/server-child.ts); the clients run here, one
 * SDK JSON-RPC client each, each sending one request at a time for `--warm-up` then
 * `--seconds` seconds per level; only requests started after the warm-up and finished within
 * the window count. Each harness client has its own task (made by a "/status" without a task),
 * kept across levels, so its history grows by 2 messages per command. The levels alternate
 * harness / bare so drift of the machine hits both alike.
 * Goal (issue 14, restating the first round's): `/status`, a durable command, costs at most x1.5
 * the bare SDK's simplest round trip in server CPU per request and in median latency, at every
 * level.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Client } from '@a2a-js/sdk/client';
import { tempDir } from './lib/cleanup.js';
import { isTask, sdkClient, sendText, type Target } from './lib/clients.js';
import { cpuMs, startServer, type ServerProcess, ADMIT_ALL } from './lib/processes.js';
import { header, latencyLine, num, printVerdicts, summarize, times, verdict, type Summary } from './lib/report.js';
import { textOf } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    'warm-up': { type: 'string', default: '1' },
    levels: { type: 'string', default: '1,16,64' },
  },
});
const SECONDS = Number(flags.seconds);
const WARM_UP = Number(flags['warm-up']);
const LEVELS = flags.levels.split(',').map(Number);
const MAX = Math.max(...LEVELS);
/** Issue 14: a durable command costs at most this much of the bare SDK's simplest round trip, in server CPU and median latency. */
/** Issue 23: `/status` at 16 clients costs at most this many times the bare round trip's server CPU. */
const GOAL_CPU_RATIO = 2.5;
const GOAL_LEVEL = 16;

interface LevelFigures {
  latency: Summary;
  perSecond: number;
  serverCpuPerRequest: number;
  clientCpuPerRequest: number;
  errors: number;
}

/** `clients[i]` sends `request(i)` one at a time; the timings of the window after the warm-up. */
async function drive(
  server: ServerProcess,
  clients: Client[],
  request: (i: number, client: Client) => Promise<void>,
): Promise<LevelFigures> {
  const begin = performance.now();
  const from = begin + WARM_UP * 1000;
  const until = from + SECONDS * 1000;
  const latencies: number[] = [];
  let errors = 0;
  let cpuBefore: Awaited<ReturnType<ServerProcess['cpu']>> | undefined;
  let clientBefore: NodeJS.CpuUsage | undefined;
  const sampler = setTimeout(async () => {
    clientBefore = process.cpuUsage();
    cpuBefore = await server.cpu();
  }, WARM_UP * 1000);
  await Promise.all(
    clients.map(async (client, i) => {
      while (performance.now() < until) {
        const start = performance.now();
        try {
          await request(i, client);
        } catch (error) {
          errors++;
          if (errors === 1) console.log(`  first error: ${(error as Error).message}`);
          continue;
        }
        const end = performance.now();
        if (start >= from && end <= until) latencies.push(end - start);
      }
    }),
  );
  clearTimeout(sampler);
  const cpuAfter = await server.cpu();
  const clientAfter = process.cpuUsage(clientBefore);
  const count = latencies.length;
  return {
    latency: summarize(latencies),
    perSecond: count / SECONDS,
    serverCpuPerRequest: cpuBefore ? cpuMs(cpuBefore, cpuAfter) / count : NaN,
    clientCpuPerRequest: (clientAfter.user + clientAfter.system) / 1000 / count,
    errors,
  };
}

function line(label: string, f: LevelFigures): string {
  return latencyLine(
    label,
    f.latency,
    `${num(f.perSecond)} req/s   server CPU ${f.serverCpuPerRequest.toFixed(3)} ms/req   client CPU ${f.clientCpuPerRequest.toFixed(3)} ms/req${f.errors ? `   ERRORS ${f.errors}` : ''}`,
    36,
  );
}

async function main(): Promise<void> {
  header("Commands under concurrency: /status vs the bare SDK's simplest round trip", [
    `command: node --import tsx bench/command-throughput.ts --seconds ${SECONDS} --warm-up ${WARM_UP} --levels ${LEVELS.join(',')}`,
    `blocking SendMessage over JSON-RPC with the SDK's client (one client object per concurrent client, each one request at a time); ` +
      `per level ${WARM_UP} s warm-up, then ${SECONDS} s measured; servers in child processes, clients in this one.`,
    `harness: "/status" on an existing INPUT_REQUIRED task, each client its own task (SqlTaskStore on SQLite; built-in offline models). ` +
      `bare SDK: DefaultRequestHandler + InMemoryTaskStore, executor answers every message with one fixed message event (no task). ` +
      `bare SDK durable (second baseline): the same SDK continuing a task in its own DatabaseTaskStore on SQLite (WAL, synchronous NORMAL), each client its own task, ` +
      `the executor answering with the task event and one INPUT_REQUIRED status update carrying a reply, as the harness's /status does.`,
  ]);

  const dataDir = tempDir('throughput');
  const harness = await startServer(
    { kind: 'harness', dataDir, config: { detectOllama: false, admission: ADMIT_ALL } },
    { name: 'harness-throughput' },
  );
  const bare = await startServer({ kind: 'bare', options: { reply: 'message' } }, { name: 'bare-throughput' });
  const durable = await startServer(
    { kind: 'bare', options: { reply: 'status', sqliteFile: join(dataDir, 'sdk', 'a2a.db') } },
    { name: 'bare-durable-throughput' },
  );
  try {
    const ourClients = await Promise.all(Array.from({ length: MAX }, () => sdkClient(harness.url)));
    const bareClients = await Promise.all(Array.from({ length: MAX }, () => sdkClient(bare.url)));
    const durableClients = await Promise.all(Array.from({ length: MAX }, () => sdkClient(durable.url)));
    const durableTasks: Target[] = [];
    for (const client of durableClients) {
      const made = await sendText(client, 'hello');
      if (!isTask(made)) throw new Error('the durable bare agent should answer with a task');
      durableTasks.push({ id: made.id, contextId: made.contextId });
    }
    // One task per client, made by a command without a task (it starts one, INPUT_REQUIRED).
    const tasks: Target[] = [];
    for (const client of ourClients) {
      const made = await sendText(client, '/status');
      if (!isTask(made)) throw new Error('a command without a task should answer with a task');
      tasks.push({ id: made.id, contextId: made.contextId });
    }

    const ours = (i: number, client: Client) =>
      sendText(client, '/status', tasks[i]).then((result) => {
        if (
          !isTask(result) ||
          result.id !== tasks[i]!.id ||
          !textOf(result.status?.message).includes('\nState: input required')
        )
          throw new Error(
            `unexpected /status answer: ${isTask(result) ? JSON.stringify(textOf(result.status?.message)).slice(0, 300) : 'a message'}`,
          );
      });
    const theirs = (_i: number, client: Client) =>
      sendText(client, 'hello').then((result) => {
        if (isTask(result) || !textOf(result).startsWith('State:')) throw new Error('unexpected bare answer');
      });

    const theirsDurable = (i: number, client: Client) =>
      sendText(client, 'hello', durableTasks[i]).then((result) => {
        if (!isTask(result) || result.id !== durableTasks[i]!.id) throw new Error('unexpected durable bare answer');
      });

    for (const level of LEVELS) {
      const o = await drive(harness, ourClients.slice(0, level), ours);
      const b = await drive(bare, bareClients.slice(0, level), theirs);
      const d = await drive(durable, durableClients.slice(0, level), theirsDurable);
      console.log(`${level} concurrent client${level === 1 ? '' : 's'}`);
      console.log(line('tiny-harness /status (own task each)', o));
      console.log(line('bare SDK fixed message', b));
      console.log(line('bare SDK durable (DatabaseTaskStore)', d));
      console.log(
        `  harness/bare: throughput ${times(o.perSecond, b.perSecond)}, median ${times(o.latency.median, b.latency.median)}, ` +
          `p99 ${times(o.latency.p99, b.latency.p99)}, server CPU per request ${times(o.serverCpuPerRequest, b.serverCpuPerRequest)}`,
      );
      console.log(
        `  harness/bare durable: median ${times(o.latency.median, d.latency.median)}, server CPU per request ${times(o.serverCpuPerRequest, d.serverCpuPerRequest)}`,
      );
      verdict(
        o.errors === 0 &&
          d.errors === 0 &&
          o.latency.median < d.latency.median &&
          o.serverCpuPerRequest < d.serverCpuPerRequest,
        `${level} client${level === 1 ? '' : 's'}: against the bare SDK's durable store, median ${times(o.latency.median, d.latency.median)}, server CPU ${times(o.serverCpuPerRequest, d.serverCpuPerRequest)} (goal, issue 14: the harness faster, the histories growing alike)`,
      );
      if (level === GOAL_LEVEL)
        verdict(
          o.errors === 0 && o.serverCpuPerRequest <= b.serverCpuPerRequest * GOAL_CPU_RATIO,
          `${level} clients: server CPU per request ${times(o.serverCpuPerRequest, b.serverCpuPerRequest)} the bare SDK's simplest round trip ` +
            `(goal, issue 23: at most x${GOAL_CPU_RATIO})\n`,
        );
    }
  } finally {
    await Promise.all([harness.close(), bare.close(), durable.close()]);
  }
  printVerdicts('command-throughput');
}

await main();
