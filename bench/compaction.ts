/**
 * Compaction: what a turn costs after `/compact` on a 10,000-message task, beside a turn on a
 * short task (the baseline, same run) and on the same long task left whole (cut to the budget,
 * `compact.auto` off); and what a compacted task keeps in the store.
 *
 *   node --import tsx bench/compaction.ts [--messages 10000]
 *
 * Tasks are seeded in the harness's SQLite file before it starts (bench/lib/seed.ts: 20-80
 * words a message). The harness and the fixture model run in child processes; the client is the
 * SDK's JSON-RPC client, one blocking `SendMessage` at a time. `/compact` runs once on the long
 * task through the harness (the fixture model writes the summary). Then, per task: the
 * characters the next turn sends (`/context`), and the turn's latency. Last, the store's bytes
 * of each task (its history rows, read from the SQLite file after the harness stopped).
 * Goal: a turn after compaction costs no more than one on a short conversation (median within
 * x1.25 of it, the noise of this machine), and compaction deletes nothing (the compacted task
 * keeps every message, plus the summary).
 */
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { ServerCallContext } from '@a2a-js/sdk/server';
import type { Client } from '@a2a-js/sdk/client';
import type { Task } from '@a2a-js/sdk';
import { DATABASE_FILE_NAME, openStore } from '../src/store/index.js';
import { tempDir } from './lib/cleanup.js';
import { isTask, sdkClient, sendText, type Target } from './lib/clients.js';
import { timed, type Budget } from './lib/measure.js';
import { startServer, ADMIT_ALL } from './lib/processes.js';
import { header, kb, ms, num, printVerdicts, times, verdict } from './lib/report.js';
import { numberedReply, prng, seededTask, textOf } from './lib/seed.js';

const { values: flags } = parseArgs({ options: { messages: { type: 'string', default: '10000' } } });
const LONG = Number(flags.messages);
const SHORT = 10;
const REPLY = numberedReply(8);
const TURN: Budget = { warmUp: 3, count: 30, min: 5, budgetMs: 10_000 };

/** The data part of a command's reply. */
function replyData(answer: Task | unknown): Record<string, unknown> {
  if (!answer || !isTask(answer as Task)) throw new Error('a command answered without a task');
  const parts = (answer as Task).status?.message?.parts ?? [];
  for (const part of parts) if (part.content?.$case === 'data') return part.content.value as Record<string, unknown>;
  throw new Error(`no data in the reply: ${textOf((answer as Task).status?.message).slice(0, 200)}`);
}

async function contextChars(client: Client, target: Target): Promise<number> {
  return Number(replyData(await sendText(client, '/context', target)).usedChars);
}

async function main(): Promise<void> {
  header(`Compaction: a turn after /compact on a ${LONG.toLocaleString('en')}-message task`, [
    `command: node --import tsx bench/compaction.ts --messages ${LONG}`,
    `blocking SendMessage over JSON-RPC; harness and fixture model in child processes; per turn figure ${TURN.warmUp} warm-up + up to ${TURN.count} timed (${TURN.budgetMs / 1000} s budget)`,
  ]);
  const model = await startServer({ kind: 'model', reply: REPLY }, { name: 'model-compaction' });
  const dataDir = tempDir('compaction');
  const store = await openStore({ dataDir });
  const random = prng(34);
  const context = new ServerCallContext();
  const seeded: Record<'short' | 'compacted' | 'whole', Target> = {} as never;
  for (const [name, length] of [
    ['short', SHORT],
    ['compacted', LONG],
    ['whole', LONG],
  ] as const) {
    const task = seededTask(length, random);
    await store.tasks.create(task, context);
    seeded[name] = { id: task.id, contextId: task.contextId };
  }
  await store.close();
  const harness = await startServer(
    {
      kind: 'harness',
      dataDir,
      config: {
        defaultModel: 'fixture:small',
        detectOllama: false,
        admission: ADMIT_ALL,
        compact: { auto: false },
        instructions: [],
        providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
      },
    },
    { name: 'harness-compaction' },
  );
  const figures = new Map<string, { chars: number; median: number; p99: number }>();
  let compactMs = 0;
  let compactData: Record<string, unknown> = {};
  try {
    const client = await sdkClient(harness.url);
    const before = await contextChars(client, seeded.compacted);
    const started = performance.now();
    compactData = replyData(await sendText(client, '/compact', seeded.compacted));
    compactMs = performance.now() - started;
    if (!compactData.compaction) throw new Error(`/compact did not compact: ${JSON.stringify(compactData)}`);
    console.log(
      `/compact on ${LONG} messages: ${ms(compactMs)}; the next turn's request ${num(before)} → ${num(await contextChars(client, seeded.compacted))} characters\n`,
    );
    for (const name of ['short', 'compacted', 'whole'] as const) {
      const target = seeded[name];
      const chars = await contextChars(client, target);
      const summary = await timed(async () => {
        const answer = await sendText(client, 'Say something.', target, 1);
        if (!isTask(answer) || textOf(answer.status?.message) !== REPLY) throw new Error('unexpected turn answer');
      }, TURN);
      figures.set(name, { chars, median: summary.median, p99: summary.p99 });
    }
  } finally {
    await Promise.all([harness.close(), model.close()]);
  }
  const db = new Database(join(dataDir, DATABASE_FILE_NAME), { readonly: true });
  const bytes = (taskId: string) => {
    const row = db
      .prepare('SELECT count(*) AS n, coalesce(sum(length(message_json)), 0) AS b FROM task_messages WHERE task_id = ?')
      .get(taskId) as { n: number; b: number };
    return row;
  };
  const stored = { compacted: bytes(seeded.compacted.id), whole: bytes(seeded.whole.id) };
  db.close();

  console.log('turn after compaction, beside a short task and the long task left whole (medians, p99 in brackets)');
  for (const [name, label] of [
    ['short', `short task (${SHORT} messages)`],
    ['compacted', `compacted task (${LONG} messages)`],
    ['whole', `whole task (${LONG} messages, cut)`],
  ] as const) {
    const f = figures.get(name)!;
    console.log(`  ${label.padEnd(34)} ${ms(f.median)} (${ms(f.p99, 1, 7)}), request ${num(f.chars, 0, 9)} characters`);
  }
  console.log(
    `stored history rows: compacted ${stored.compacted.n} messages, ${kb(stored.compacted.b)}; whole ${stored.whole.n} messages, ${kb(stored.whole.b)}`,
  );
  const short = figures.get('short')!;
  const compacted = figures.get('compacted')!;
  verdict(
    compacted.median <= short.median * 1.25,
    `a turn after compaction costs ${times(compacted.median, short.median)} a turn on ${SHORT} messages (goal: no more, within x1.25 noise)`,
  );
  verdict(
    stored.compacted.n >= LONG,
    `compaction deletes nothing: ${stored.compacted.n} messages kept of ${LONG} seeded, plus the turns' own`,
  );
  printVerdicts('compaction');
}

await main();
