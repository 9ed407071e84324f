/**
 * What `durability: "full"` costs against the default `"normal"`: the same harness twice, in
 * the same run, one with each setting. "normal" is SQLite's `synchronous = NORMAL` in WAL mode
 * (a commit survives the process dying, not a power cut); "full" is `synchronous = FULL`
 * (every commit flushed to the disk before the harness acknowledges it).
 *
 *   node --import tsx bench/durability.ts [--rounds 3] [--seconds 3] [--turns 20] [--tokens 40]
 *
 * Per round and per server (the order alternates round by round so drift hits both alike):
 * - commands: blocking `SendMessage` "/status" on an existing task, one at a time, for
 *   `--seconds` (each stores the command message and the reply: about three commits);
 * - turns: `--turns` blocking `SendMessage` on new tasks, answered by a fixture model that
 *   streams `--tokens` words 1 ms apart (each word that arrives alone is a stored event).
 * Servers and the fixture model run in child processes, the client here. Then, in this process,
 * one commit alone: `--saves` status updates appended straight to a `SqlTaskStore`
 * (`append`, as the engine stores each event: the task row and the event's log row in one
 * transaction; this drove `save` of the whole task before the engine's log), one per setting in
 * turn. The data folders are in the system's temp folder, so the figures are this disk's flush
 * cost. No goal: figures.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { openStore, type Store } from '../src/store/index.js';
import { tempDir } from './lib/cleanup.js';
import { isTask, sdkClient, sendText, type Target } from './lib/clients.js';
import { startServer, type ServerProcess, ADMIT_ALL } from './lib/processes.js';
import { header, latencyLine, printVerdicts, summarize, times, type Summary } from './lib/report.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    turns: { type: 'string', default: '20' },
    tokens: { type: 'string', default: '40' },
    saves: { type: 'string', default: '1000' },
  },
});
const ROUNDS = Number(flags.rounds);
const SECONDS = Number(flags.seconds);
const TURNS = Number(flags.turns);
const TOKENS = Number(flags.tokens);
const SAVES = Number(flags.saves);
const SETTINGS = ['normal', 'full'] as const;
type Setting = (typeof SETTINGS)[number];

interface Side {
  server: ServerProcess;
  client: Client;
  task: Target;
  commands: number[];
  turns: number[];
}

async function timedCommand(side: Side): Promise<number> {
  const start = performance.now();
  const answer = await sendText(side.client, '/status', side.task);
  if (!isTask(answer) || !answer.status?.message) throw new Error('/status did not answer with the task');
  return performance.now() - start;
}

async function timedTurn(side: Side, reply: string): Promise<number> {
  const start = performance.now();
  const answer = await sendText(side.client, 'Tell me something.');
  const end = performance.now();
  const text = isTask(answer)
    ? answer.status?.message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')
    : '';
  if (text !== reply) throw new Error(`the turn answered "${text?.slice(0, 80)}", not the fixture's reply`);
  return end - start;
}

async function round(side: Side, reply: string): Promise<void> {
  const until = performance.now() + SECONDS * 1000;
  while (performance.now() < until) side.commands.push(await timedCommand(side));
  for (let i = 0; i < TURNS; i++) side.turns.push(await timedTurn(side, reply));
}

const reply = Array.from({ length: TOKENS }, (_, i) => `t${i}`).join(' ');
header('Durability: "full" (every commit flushed to the disk) against "normal" (the default)', [
  `command: node --import tsx bench/durability.ts --rounds ${ROUNDS} --seconds ${SECONDS} --turns ${TURNS} --tokens ${TOKENS} --saves ${SAVES}`,
  `per round and setting: blocking SendMessage "/status" on one task for ${SECONDS} s, then ${TURNS} blocking turns on new tasks (fixture model, ${TOKENS} words 1 ms apart); ` +
    `${ROUNDS} rounds, the order of the two servers alternating; SDK JSON-RPC client; SqlTaskStore on SQLite in the temp folder.`,
]);

const model = await startServer({ kind: 'model', reply, chunkDelayMs: 1 }, { name: 'model' });
const sides = {} as Record<Setting, Side>;
for (const durability of SETTINGS) {
  const server = await startServer(
    {
      kind: 'harness',
      dataDir: tempDir(`durability-${durability}`),
      config: {
        durability,
        defaultModel: 'fixture:small',
        detectOllama: false,
        admission: ADMIT_ALL,
        providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
      },
    },
    { name: `harness-${durability}` },
  );
  const client = await sdkClient(server.url);
  const first = await sendText(client, '/status');
  if (!isTask(first)) throw new Error('no task');
  sides[durability] = { server, client, task: { id: first.id, contextId: first.contextId }, commands: [], turns: [] };
  // Warm-up: a few commands and turns before anything is timed.
  for (let i = 0; i < 20; i++) await timedCommand(sides[durability]);
  for (let i = 0; i < 3; i++) await timedTurn(sides[durability], reply);
}

for (let r = 0; r < ROUNDS; r++) {
  for (const durability of r % 2 === 0 ? SETTINGS : [...SETTINGS].reverse()) {
    await round(sides[durability], reply);
    await model.reset(); // the fixture records every request; keep its memory flat
  }
}

const figures = {} as Record<Setting, { commands: Summary; turns: Summary }>;
for (const durability of SETTINGS) {
  figures[durability] = { commands: summarize(sides[durability].commands), turns: summarize(sides[durability].turns) };
}
console.log('/status (blocking SendMessage on an existing task)');
for (const durability of SETTINGS) {
  const s = figures[durability].commands;
  console.log(latencyLine(`durability "${durability}"`, s, `${(s.n / (ROUNDS * SECONDS)).toFixed(0)} req/s`));
}
console.log(
  `  full/normal: median ${times(figures.full.commands.median, figures.normal.commands.median)}, p99 ${times(figures.full.commands.p99, figures.normal.commands.p99)}, ` +
    `+${(figures.full.commands.median - figures.normal.commands.median).toFixed(2)} ms a command at the median`,
);
console.log(`\nturn of ${TOKENS} streamed words (blocking SendMessage, new task each)`);
for (const durability of SETTINGS) console.log(latencyLine(`durability "${durability}"`, figures[durability].turns));
console.log(
  `  full/normal: median ${times(figures.full.turns.median, figures.normal.turns.median)}, p99 ${times(figures.full.turns.p99, figures.normal.turns.p99)}, ` +
    `+${(figures.full.turns.median - figures.normal.turns.median).toFixed(2)} ms a turn at the median`,
);

for (const side of Object.values(sides)) await side.server.close();
await model.close();

/** One status update appended, as the engine stores an event: one small transaction, one commit. */
async function timedAppend(store: Store, task: Task, i: number): Promise<number> {
  const start = performance.now();
  await store.tasks.append(task.id, context, [
    {
      kind: 'statusUpdate',
      data: {
        taskId: task.id,
        contextId: task.contextId,
        status: {
          state: TaskState.TASK_STATE_WORKING,
          message: undefined,
          timestamp: new Date(Date.UTC(2025, 0, 1) + i).toISOString(),
        },
        metadata: {},
      },
    },
  ]);
  return performance.now() - start;
}

const context = new ServerCallContext();
const saves = {} as Record<Setting, number[]>;
const stores = {} as Record<Setting, { store: Store; task: Task }>;
for (const durability of SETTINGS) {
  const store = await openStore({ dataDir: tempDir(`durability-store-${durability}`), durability });
  const task: Task = {
    id: randomUUID(),
    contextId: randomUUID(),
    status: undefined,
    artifacts: [],
    history: [],
    metadata: {},
  };
  await store.tasks.create(task, context);
  for (let i = 0; i < 50; i++) await timedAppend(store, task, -i - 1); // warm-up
  stores[durability] = { store, task };
  saves[durability] = [];
}
for (let i = 0; i < SAVES; i++) {
  for (const durability of i % 2 === 0 ? SETTINGS : [...SETTINGS].reverse())
    saves[durability].push(await timedAppend(stores[durability].store, stores[durability].task, i));
}
console.log(`
one commit alone (SqlTaskStore.append of a status update, in this process, the settings alternating)`);
const commit = { normal: summarize(saves.normal), full: summarize(saves.full) };
for (const durability of SETTINGS) console.log(latencyLine(`durability "${durability}"`, commit[durability]));
console.log(
  `  full/normal: median ${times(commit.full.median, commit.normal.median)}, +${(commit.full.median - commit.normal.median).toFixed(3)} ms a commit at the median`,
);
for (const { store } of Object.values(stores)) await store.close();
printVerdicts('durability');
process.exit(0);
