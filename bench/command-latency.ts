/**
 * End-to-end proof of the requirement "a command on a task with 5,000 history messages is no
 * more than twice as slow as on a fresh task", through the real harness and the SDK's client.
 *
 *   node --import tsx bench/command-latency.ts [--requests N] [--history M] [--history-length K] [--no-baseline]
 *
 * 1. Seeds a temporary data dir, before the harness starts, with one INPUT_REQUIRED task of M
 *    (default 5000) alternating user/agent messages of 20-80 words and one task of 1 message,
 *    each stored whole by `SqlTaskStore.create` (its log's first event, as the engine makes a task).
 * 2. Starts the harness in a child process on 127.0.0.1:0 with the built-in offline models.
 * 3. Sends blocking SendMessage "/status" over JSON-RPC with the SDK's client: 50 warm-up
 *    requests per task, then N (default 500) timed requests alternating fresh/long, one at a time.
 * 4. Does the same against the bare SDK (bench/bare-sdk-agent.ts: DefaultRequestHandler with
 *    InMemoryTaskStore, an executor answering with a task event and an INPUT_REQUIRED status),
 *    its two tasks seeded directly into the store it hands the SDK, with the same words. The
 *    bare SDK's long task costs hundreds of milliseconds a request, so its run stops after
 *    20 s (at least 20 requests per task).
 *
 * `--history-length K` sets `configuration.historyLength` on the timed requests; by default it
 * is unset, as with a client that sets nothing.
 * The goal: median latency on the long task at most twice that on the fresh task.
 * A measurement, not a test: the process exits 0 whatever the ratio.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ServerCallContext } from '@a2a-js/sdk/server';
import type { Client } from '@a2a-js/sdk/client';
import { openStore } from '../src/store/index.js';
import { tempDir } from './lib/cleanup.js';
import { isTask, sdkClient, sendText, type Target } from './lib/clients.js';
import { startServer, ADMIT_ALL } from './lib/processes.js';
import { header, kb, latencyLine, printVerdicts, summarize, verdict, type Summary } from './lib/report.js';
import { prng, seededTask, textOf } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '500' },
    history: { type: 'string', default: '5000' },
    'history-length': { type: 'string' },
    'no-baseline': { type: 'boolean', default: false },
  },
});
const N = Number(flags.requests);
const M = Number(flags.history);
const HISTORY_LENGTH = flags['history-length'] === undefined ? undefined : Number(flags['history-length']);
const WARM_UP = 50;
const BASELINE_WARM_UP = 3;
const BASELINE_BUDGET_MS = 20_000;
const BASELINE_MIN = 40;
const SEED = 5000;

/** The size of one reply's body on the wire, from a separate client (after the timed run). */
async function replyBytes(url: string, target: Target): Promise<number> {
  let bytes = 0;
  const client = await sdkClient(url, async (input, init) => {
    const response = await fetch(input, init);
    bytes = Number(response.headers.get('content-length') ?? 0);
    return response;
  });
  await command(client, target);
  return bytes;
}

async function command(client: Client, target: Target): Promise<string> {
  const result = await sendText(client, '/status', target, HISTORY_LENGTH);
  if (!isTask(result) || result.id !== target.id) throw new Error('expected the task back');
  if (!textOf(result.status?.message).includes('State: input required'))
    throw new Error(`unexpected reply: ${textOf(result.status?.message).slice(0, 200)}`);
  return textOf(result.status?.message);
}

/** Warm-up on both tasks, then requests alternating fresh/long, one at a time. */
async function measure(
  client: Client,
  fresh: Target,
  long: Target,
  options: { warmUp: number; count: number; budgetMs?: number; min?: number },
) {
  for (let i = 0; i < options.warmUp; i++) {
    await command(client, fresh);
    await command(client, long);
  }
  const times: { fresh: number[]; long: number[] } = { fresh: [], long: [] };
  const deadline = performance.now() + (options.budgetMs ?? Infinity);
  for (let i = 0; i < options.count; i++) {
    if (performance.now() > deadline && i >= (options.min ?? 0) && i % 2 === 0) break;
    const which = i % 2 === 0 ? 'fresh' : 'long';
    const before = performance.now();
    await command(client, which === 'fresh' ? fresh : long);
    times[which].push(performance.now() - before);
  }
  return { fresh: summarize(times.fresh), long: summarize(times.long) };
}

async function historyLength(client: Client, id: string): Promise<number> {
  return (await client.getTask({ tenant: '', id, historyLength: undefined })).history.length;
}

function ratios(long: Summary, fresh: Summary): { median: number; line: string } {
  const median = long.median / fresh.median;
  return { median, line: `  long/fresh: median x${median.toFixed(2)}, p99 x${(long.p99 / fresh.p99).toFixed(2)}` };
}

async function runHarness(): Promise<void> {
  const dataDir = tempDir('command-latency');
  const random = prng(SEED);
  const store = await openStore({ dataDir });
  const longTask = seededTask(M, random);
  const freshTask = seededTask(1, random);
  const context = new ServerCallContext();
  // Each stored as one creation event (`create`), as the engine stores a new task.
  await store.tasks.create(longTask, context);
  await store.tasks.create(freshTask, context);
  await store.close();

  const harness = await startServer(
    { kind: 'harness', dataDir, config: { detectOllama: false, admission: ADMIT_ALL } },
    { name: 'harness-command-latency' },
  );
  try {
    const client = await sdkClient(harness.url);
    const replyText = await command(client, freshTask);
    const started = performance.now();
    const result = await measure(client, freshTask, longTask, { warmUp: WARM_UP, count: N });
    const seconds = (performance.now() - started) / 1000;
    const [freshEnd, longEnd] = [await historyLength(client, freshTask.id), await historyLength(client, longTask.id)];
    const [freshBytes, longBytes] = [await replyBytes(harness.url, freshTask), await replyBytes(harness.url, longTask)];

    console.log(
      `tiny-harness (SqlTaskStore on SQLite, Commands extension, child process), /status, ${seconds.toFixed(1)} s`,
    );
    console.log(
      `  built-in offline models; command answered by the harness: "${replyText.split('\n').find((l) => l.startsWith('State:'))}"`,
    );
    console.log(latencyLine('fresh task (1 msg at start)', result.fresh));
    console.log(latencyLine(`long task (${M} msgs at start)`, result.long));
    const r = ratios(result.long, result.fresh);
    console.log(r.line);
    console.log(`  reply body after the run: fresh task ${kb(freshBytes)}, long task ${kb(longBytes)}`);
    console.log(
      `  note: every command appends 2 history messages (command + reply): the fresh task ended at ${freshEnd} messages,` +
        ` the long one at ${longEnd} (fresh: 1 probe + ${WARM_UP} warm-up + ${result.fresh.n} timed commands; long: ${WARM_UP} + ${result.long.n}); still far from ${M}.`,
    );
    verdict(
      r.median <= 2,
      `median ratio ${r.median.toFixed(2)} (goal: a command on a ${M}-message task at most twice as slow as on a fresh task)\n`,
    );
  } finally {
    await harness.close();
  }
}

async function runBaseline(): Promise<void> {
  const agent = await startServer({ kind: 'bare', options: { reply: 'status' } }, { name: 'bare-command-latency' });
  try {
    const [long, fresh] = await agent.seed([M, 1], SEED);
    const client = await sdkClient(agent.url);
    const started = performance.now();
    const result = await measure(client, fresh!, long!, {
      warmUp: BASELINE_WARM_UP,
      count: N,
      budgetMs: BASELINE_BUDGET_MS,
      min: BASELINE_MIN,
    });
    const seconds = (performance.now() - started) / 1000;
    const freshEnd = await historyLength(client, fresh!.id);
    const [freshBytes, longBytes] = [await replyBytes(agent.url, fresh!), await replyBytes(agent.url, long!)];

    console.log(
      `bare SDK baseline (DefaultRequestHandler + InMemoryTaskStore, trivial executor, child process), ${seconds.toFixed(1)} s`,
    );
    console.log(
      `  both tasks seeded directly into the SDK's store (the same words); ${BASELINE_WARM_UP} warm-up requests per task, then timed requests until ${N} or ${BASELINE_BUDGET_MS / 1000} s (at least ${BASELINE_MIN})`,
    );
    console.log(latencyLine('fresh task (1 msg at start)', result.fresh));
    console.log(latencyLine(`long task (${M} msgs at start)`, result.long));
    console.log(ratios(result.long, result.fresh).line);
    console.log(`  reply body after the run: fresh task ${kb(freshBytes)}, long task ${kb(longBytes)}`);
    console.log(`  note: the fresh task ended at ${freshEnd} messages (each request appends 2).\n`);
  } finally {
    await agent.close();
  }
}

async function main(): Promise<void> {
  header(`Commands on a long task: /status on a ${M}-message task vs a fresh one`, [
    `command: node --import tsx bench/command-latency.ts --requests ${N} --history ${M}${HISTORY_LENGTH === undefined ? '' : ` --history-length ${HISTORY_LENGTH}`}`,
    `N = ${N} timed requests (alternating fresh/long) after ${WARM_UP} warm-up requests per task; M = ${M} history messages; ` +
      `JSON-RPC over 127.0.0.1, blocking SendMessage, historyLength ${HISTORY_LENGTH === undefined ? 'unset (the harness answers a command with its last 2 history messages; the bare SDK with all)' : HISTORY_LENGTH}`,
  ]);
  await runHarness();
  if (!flags['no-baseline']) await runBaseline();
  printVerdicts('command-latency');
}

await main();
