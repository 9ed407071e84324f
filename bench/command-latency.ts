/**
 * End-to-end proof of the requirement "a command on a task with 5,000 history messages is no
 * more than twice as slow as on a fresh task", through the real harness and the SDK's client.
 *
 *   node --import tsx bench/command-latency.ts [--requests N] [--history M] [--history-length K] [--no-baseline]
 *
 * 1. Seeds a temporary data dir, before the harness starts, with one INPUT_REQUIRED task of M
 *    (default 5000) alternating user/agent messages of 20-80 words and one task of 1 message.
 * 2. Starts the harness in-process on 127.0.0.1:0 with the built-in offline models.
 * 3. Sends blocking SendMessage "/status" over JSON-RPC with the SDK's client: 50 warm-up
 *    requests per task, then N (default 500) timed requests alternating fresh/long, one at a time.
 * 4. Does the same against the bare SDK (bench/bare-sdk-agent.ts: DefaultRequestHandler with
 *    InMemoryTaskStore), its long task seeded by sending messages.
 *
 * `--history-length K` sets `configuration.historyLength` on the timed requests; by default it
 * is unset, as with a client that sets nothing, and the reply task carries its whole history.
 * The goal: median latency on the long task at most twice that on the fresh task.
 * A measurement, not a test: the process exits 0 whatever the ratio.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { parseConfig } from '../src/config/load.js';
import { startHarness } from '../src/harness.js';
import { openStore } from '../src/store/index.js';
import { startBareSdkAgent } from './bare-sdk-agent.js';

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
const BASELINE_SEED_BUDGET_MS = 60_000;
const ROOT = fileURLToPath(new URL('..', import.meta.url));

// ---------------------------------------------------------------- seeding

const WORDS = (
  'the task model agent reply history message context state command status server client request ' +
  'store write read cache event update stream turn answer question input output latency figure ' +
  'measure quick brown fox jumps over lazy dog while a careful reader checks every number twice ' +
  'before trusting what the benchmark prints about median percentile throughput and memory use'
).split(' ');

/** A small deterministic generator, so every run seeds the same text. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function text(random: () => number): string {
  const count = 20 + Math.floor(random() * 61);
  return Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ') + '.';
}

function message(taskId: string, contextId: string, role: Role, body: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role,
    parts: [{ content: { $case: 'text', value: body }, mediaType: 'text/plain', filename: '', metadata: {} }],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

function seededTask(length: number, random: () => number): Task {
  const id = randomUUID();
  const contextId = randomUUID();
  const history = Array.from({ length }, (_, i) => message(id, contextId, i % 2 === 0 ? Role.ROLE_USER : Role.ROLE_AGENT, text(random)));
  return {
    id,
    contextId,
    status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history,
    metadata: {},
  };
}

// ---------------------------------------------------------------- client and timing

async function jsonRpcClient(url: string, fetchImpl?: typeof fetch): Promise<Client> {
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })], preferredTransports: ['JSONRPC'] });
  return factory.createFromUrl(`${url}/`);
}

/** The size of one reply's body on the wire, from a separate client (after the timed run). */
async function replyBytes(url: string, body: string, target: Target): Promise<number> {
  let bytes = 0;
  const client = await jsonRpcClient(url, async (input, init) => {
    const response = await fetch(input, init);
    bytes = Number(response.headers.get('content-length') ?? 0);
    return response;
  });
  await send(client, body, target, HISTORY_LENGTH);
  return bytes;
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

interface Target {
  id: string;
  contextId: string;
}

async function send(client: Client, body: string, target: Target | undefined, historyLength: number | undefined): Promise<Task> {
  const request: SendMessageRequest = {
    tenant: '',
    message: message(target?.id ?? '', target?.contextId ?? '', Role.ROLE_USER, body),
    configuration:
      historyLength === undefined ? undefined : { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength, returnImmediately: false },
    metadata: {},
  };
  const result = await client.sendMessage(request);
  if (!('status' in result)) throw new Error('expected a task, got a message');
  const task = result as Task;
  if (target && task.id !== target.id) throw new Error(`reply for task ${task.id}, expected ${target.id}`);
  if (task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) throw new Error(`task ${task.id} is in state ${task.status?.state}`);
  return task;
}

interface Figures {
  median: number;
  p90: number;
  p99: number;
  perSecond: number;
}

function figures(times: number[]): Figures {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const mean = sorted.reduce((sum, t) => sum + t, 0) / sorted.length;
  return { median: at(0.5), p90: at(0.9), p99: at(0.99), perSecond: 1000 / mean };
}

/** Warm-up on both tasks, then N requests alternating fresh/long, one at a time. */
async function measure(client: Client, body: string, fresh: Target, long: Target): Promise<{ fresh: Figures; long: Figures }> {
  for (let i = 0; i < WARM_UP; i++) {
    await send(client, body, fresh, HISTORY_LENGTH);
    await send(client, body, long, HISTORY_LENGTH);
  }
  const times: { fresh: number[]; long: number[] } = { fresh: [], long: [] };
  for (let i = 0; i < N; i++) {
    const which = i % 2 === 0 ? 'fresh' : 'long';
    const before = performance.now();
    await send(client, body, which === 'fresh' ? fresh : long, HISTORY_LENGTH);
    times[which].push(performance.now() - before);
  }
  return { fresh: figures(times.fresh), long: figures(times.long) };
}

async function historyLength(client: Client, id: string): Promise<number> {
  return (await client.getTask({ tenant: '', id, historyLength: undefined })).history.length;
}

// ---------------------------------------------------------------- report

const ms = (value: number) => `${value.toFixed(2).padStart(8)} ms`;

function row(label: string, f: Figures): string {
  return `  ${label.padEnd(30)} median ${ms(f.median)}   p90 ${ms(f.p90)}   p99 ${ms(f.p99)}   ${f.perSecond.toFixed(0).padStart(5)} req/s`;
}

function ratios(long: Figures, fresh: Figures): { median: number; p99: number; line: string } {
  const median = long.median / fresh.median;
  const p99 = long.p99 / fresh.p99;
  return { median, p99, line: `  long/fresh: median x${median.toFixed(2)}, p99 x${p99.toFixed(2)}` };
}

function versionOf(pkg: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
}

// ---------------------------------------------------------------- the two runs

async function runHarness(dataDir: string): Promise<void> {
  const random = prng(5000);
  const store = await openStore({ dataDir });
  const longTask = seededTask(M, random);
  const freshTask = seededTask(1, random);
  const context = new ServerCallContext();
  await store.tasks.save(longTask, context);
  await store.tasks.save(freshTask, context);
  await store.close();

  const harness = await startHarness({ config: parseConfig('{"detectOllama": false}'), dataDir, host: '127.0.0.1', port: 0, env: {} });
  try {
    const client = await jsonRpcClient(harness.url);
    const probe = await send(client, '/status', freshTask, 1);
    const replyText = probe.status?.message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('') ?? '';
    if (!/State: TASK_STATE_INPUT_REQUIRED/.test(replyText)) throw new Error(`/status was not answered by the harness: ${replyText}`);

    const started = performance.now();
    const result = await measure(client, '/status', freshTask, longTask);
    const seconds = (performance.now() - started) / 1000;
    const [freshEnd, longEnd] = [await historyLength(client, freshTask.id), await historyLength(client, longTask.id)];
    const [freshBytes, longBytes] = [await replyBytes(harness.url, '/status', freshTask), await replyBytes(harness.url, '/status', longTask)];

    console.log(`tiny-harness (SqlTaskStore on SQLite, Commands extension), /status, ${seconds.toFixed(1)} s`);
    console.log(`  default model: ${harness.catalog.defaultModel} (built-in, offline); command answered by the harness: "${replyText.split('\n').find((l) => l.startsWith('State:'))}"`);
    console.log(row('fresh task (1 msg at start)', result.fresh));
    console.log(row(`long task (${M} msgs at start)`, result.long));
    const r = ratios(result.long, result.fresh);
    console.log(r.line);
    console.log(`  reply body after the run: fresh task ${kb(freshBytes)}, long task ${kb(longBytes)}`);
    console.log(
      `  note: every command appends 2 history messages (command + reply): the fresh task ended at ${freshEnd} messages,` +
        ` the long one at ${longEnd} (fresh: 1 probe + ${WARM_UP} warm-up + ${N / 2} timed commands; long: ${WARM_UP} + ${N / 2}); still far from ${M}.`,
    );
    console.log(`  ${r.median <= 2 ? 'PASS' : 'FAIL'}: median ratio ${r.median.toFixed(2)} ${r.median <= 2 ? '<=' : '>'} 2 (goal: a command on a ${M}-message task at most twice as slow as on a fresh task)\n`);
  } finally {
    await harness.close();
  }
}

async function runBaseline(): Promise<void> {
  const agent = await startBareSdkAgent();
  try {
    const client = await jsonRpcClient(agent.url);
    const fresh = await send(client, 'hello', undefined, 1);
    const long = await send(client, 'hello', undefined, 1);
    // Seeding: each exchange adds 2 messages (user + agent). M/10 exchanges first; an exchange
    // costs more as the task grows, so M/2 exchanges take about 25x as long: seeding goes on to
    // M/2 only when that prediction fits the budget.
    const half = Math.round(M / 2);
    const tenth = Math.round(M / 10);
    const seedStart = performance.now();
    let exchanges = 0;
    const seedTo = async (count: number) => {
      for (; exchanges < count; exchanges++) await send(client, text(prng(exchanges)), long, 1);
    };
    await seedTo(tenth);
    const predictedHalfMs = (performance.now() - seedStart) * 25;
    const chosen = predictedHalfMs <= BASELINE_SEED_BUDGET_MS ? half : tenth;
    await seedTo(chosen);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const seededLength = await historyLength(client, long.id);

    const started = performance.now();
    const result = await measure(client, '/status', fresh, long);
    const seconds = (performance.now() - started) / 1000;
    const freshEnd = await historyLength(client, fresh.id);
    const [freshBytes, longBytes] = [await replyBytes(agent.url, '/status', fresh), await replyBytes(agent.url, '/status', long)];

    const which = chosen === half ? 'M/2' : 'M/10';
    console.log(`bare SDK baseline (DefaultRequestHandler + InMemoryTaskStore, trivial executor), ${seconds.toFixed(1)} s`);
    console.log(
      `  long task seeded by ${chosen} exchanges = ${seededLength} messages (${which} exchanges; M/2 predicted at ${(predictedHalfMs / 1000).toFixed(0)} s ` +
        `from the first M/10, budget ${BASELINE_SEED_BUDGET_MS / 1000} s; seeding took ${seedSeconds.toFixed(1)} s)`,
    );
    console.log(row('fresh task (2 msgs at start)', result.fresh));
    console.log(row(`long task (${seededLength} msgs at start)`, result.long));
    console.log(ratios(result.long, result.fresh).line);
    console.log(`  reply body after the run: fresh task ${kb(freshBytes)}, long task ${kb(longBytes)}`);
    console.log(`  note: the fresh task ended at ${freshEnd} messages (each request appends 2).\n`);
  } finally {
    await agent.close();
  }
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(`machine: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores, ${os.platform()} ${os.release()}`);
  console.log(`node ${process.version}; @a2a-js/sdk ${versionOf('@a2a-js/sdk')}, kysely ${versionOf('kysely')}, better-sqlite3 ${versionOf('better-sqlite3')}`);
  console.log(
    `N = ${N} timed requests (alternating fresh/long, ${N / 2} each) after ${WARM_UP} warm-up requests per task; M = ${M} history messages; ` +
      `JSON-RPC over 127.0.0.1, blocking SendMessage, historyLength ${HISTORY_LENGTH === undefined ? 'unset (the harness answers a command with its last 2 history messages; the bare SDK with all)' : HISTORY_LENGTH}\n`,
  );
  const dataDir = mkdtempSync(join(os.tmpdir(), 'tiny-harness-command-latency-'));
  try {
    await runHarness(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (!flags['no-baseline']) await runBaseline();
}

await main();
