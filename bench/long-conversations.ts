/**
 * Long conversations: a command and a turn on tasks with 10, 1,000 and 10,000 history
 * messages, on the harness and on the bare SDK continuing tasks of the same length.
 *
 *   node --import tsx bench/long-conversations.ts [--levels 10,1000,10000]
 *
 * Tasks are seeded before the runs: the harness's SQLite file through its store before it
 * starts (`SqlTaskStore.create`: each task whole, as its log's first event), the bare SDK's
 * `InMemoryTaskStore` directly (the store handed to its `DefaultRequestHandler`), with the same
 * deterministic text (20-80 words a message). Both servers run in child processes; the client
 * is the SDK's JSON-RPC client, one blocking `SendMessage` at a time:
 * - command: "/status" (the bare SDK's executor answers it with a task event and an
 *   INPUT_REQUIRED status carrying a short message, what a command reply looks like);
 * - turn: an ordinary message, answered by a fixture model (8 tokens, no delay), streamed back
 *   as artifact updates, then the final status. The bare SDK sends the model the whole
 *   conversation; the harness the newest messages within `contextChars` (200,000 characters
 *   by default: about 660 of these messages), as a model's context window requires.
 *   Measured with `configuration.historyLength` unset (the SDK returns the whole task) and
 *   with historyLength 1, each on its own task.
 * Also timed: the model request alone (the conversation as the harness sends it, POSTed to the
 * fixture), the part of a turn no server can avoid. Each figure: a few warm-up requests, then up to N timed ones
 * within a time budget.
 * Goal: our cost stays flat, 10,000 messages at most twice the cost of 10.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ServerCallContext } from '@a2a-js/sdk/server';
import type { Client } from '@a2a-js/sdk/client';
import { openStore } from '../src/store/index.js';
import { tempDir } from './lib/cleanup.js';
import { isTask, postSse, sdkClient, sendText, type Target } from './lib/clients.js';
import { timed, type Budget } from './lib/measure.js';
import { startServer, ADMIT_ALL } from './lib/processes.js';
import { header, kb, ms, printVerdicts, times, verdict, type Summary } from './lib/report.js';
import { DEFAULT_CONTEXT_CHARS } from '../src/config/schema.js';
import { buildConversation } from '../src/conversation/build.js';
import { numberedReply, prng, seededTask, textOf } from './lib/seed.js';

const { values: flags } = parseArgs({ options: { levels: { type: 'string', default: '10,1000,10000' } } });
const LEVELS = flags.levels.split(',').map(Number);
const REPLY = numberedReply(8);
const COMMAND: Budget = { warmUp: 10, count: 100, min: 5, budgetMs: 8000 };
const TURN: Budget = { warmUp: 2, count: 20, min: 3, budgetMs: 10000 };
const MODEL: Budget = { warmUp: 1, count: 10, min: 3, budgetMs: 5000 };
/** The three tasks of each level: one for commands, one per turn variant. */
const ROLES = ['command', 'turn', 'turn-h1'] as const;

interface LevelFigures {
  command: Summary;
  turn: Summary;
  turnH1: Summary;
  turnBytes: number;
  turnH1Bytes: number;
  commandBytes: number;
}

/** Two more tasks of 10 messages warm each server up before anything is timed. */
const WARM_UP_TASKS = [10, 10];
/** Lengths in seeding order, and the seed: the same words on both sides. */
const seedLengths = () => [...LEVELS.flatMap((level) => ROLES.map(() => level)), ...WARM_UP_TASKS];
const SEED = 10_000;

/** A client that remembers the size of the last response body. */
async function sizedClient(url: string): Promise<{ client: Client; lastBytes: () => number }> {
  let bytes = 0;
  const client = await sdkClient(url, async (input, init) => {
    const response = await fetch(input, init);
    bytes = Number(response.headers.get('content-length') ?? 0);
    return response;
  });
  return { client, lastBytes: () => bytes };
}

async function measureSide(url: string, tasks: Target[]): Promise<Map<number, LevelFigures>> {
  const { client, lastBytes } = await sizedClient(url);
  const figures = new Map<number, LevelFigures>();
  // A freshly started server is slow at first (code not yet optimised): warm it up on tasks of
  // its own, so that the first level measured is not the slowest for that reason.
  const [warmCommand, warmTurn] = tasks.slice(LEVELS.length * 3) as [Target, Target];
  for (let i = 0; i < 30; i++) await sendText(client, '/status', warmCommand);
  for (let i = 0; i < 5; i++) await sendText(client, 'Say something.', warmTurn, 1);
  for (const [l, level] of LEVELS.entries()) {
    const [commandTask, turnTask, turnH1Task] = tasks.slice(l * 3, l * 3 + 3) as [Target, Target, Target];
    const command = await timed(async () => {
      const answer = await sendText(client, '/status', commandTask);
      if (!isTask(answer) || answer.status?.state === undefined || !textOf(answer.status.message).includes('State: '))
        throw new Error('unexpected command answer');
    }, COMMAND);
    const commandBytes = lastBytes();
    const turn = (target: Target, historyLength?: number) => async () => {
      const answer = await sendText(client, 'Say something.', target, historyLength);
      if (!isTask(answer) || textOf(answer.status?.message) !== REPLY)
        throw new Error(
          `unexpected turn answer: ${isTask(answer) ? textOf(answer.status?.message).slice(0, 100) : 'a message'}`,
        );
    };
    const t = await timed(turn(turnTask), TURN);
    const turnBytes = lastBytes();
    const t1 = await timed(turn(turnH1Task, 1), TURN);
    const turnH1Bytes = lastBytes();
    figures.set(level, { command, turn: t, turnH1: t1, turnBytes, turnH1Bytes, commandBytes });
    console.log(
      `  ${String(level).padStart(6)} messages: command ${ms(command.median)}, turn ${ms(t.median)} (historyLength unset), ${ms(t1.median)} (historyLength 1)`,
    );
  }
  return figures;
}

/** The model request alone: the seeded conversation POSTed to the fixture, streamed to the end. */
async function measureModel(modelUrl: string): Promise<Map<number, Summary>> {
  const random = prng(SEED);
  const conversations = new Map<number, Array<{ role: string; content: string }>>();
  for (const length of seedLengths()) {
    const task = seededTask(length, random);
    // What the harness sends: the newest messages within its default context budget.
    if (!conversations.has(length))
      conversations.set(length, [
        ...buildConversation({ history: task.history, budgetChars: DEFAULT_CONTEXT_CHARS }).messages.filter(
          (m) => m.role !== 'tool',
        ),
        { role: 'user', content: 'Say something.' },
      ]);
  }
  const figures = new Map<number, Summary>();
  for (const level of LEVELS) {
    const body = {
      model: 'small',
      stream: true,
      stream_options: { include_usage: true },
      messages: conversations.get(level),
    };
    figures.set(
      level,
      await timed(async () => {
        const result = await postSse(`${modelUrl}/chat/completions`, body, { keep: false });
        if (result.status !== 200) throw new Error(`model answered ${result.status}`);
      }, MODEL),
    );
  }
  return figures;
}

async function main(): Promise<void> {
  header('Long conversations: a command and a turn on tasks of 10 to 10,000 messages, harness vs bare SDK', [
    `command: node --import tsx bench/long-conversations.ts --levels ${LEVELS.join(',')}`,
    `blocking SendMessage over JSON-RPC with the SDK's client; servers and the fixture model in child processes; ` +
      `per figure: commands ${COMMAND.warmUp} warm-up + up to ${COMMAND.count} timed (${COMMAND.budgetMs / 1000} s budget), turns ${TURN.warmUp} + up to ${TURN.count} (${TURN.budgetMs / 1000} s), ` +
      `at least ${TURN.min}; before them, 30 commands and 5 turns on two other tasks warm each server up. Seeded messages: 20-80 words each; every command or turn appends 2 more.`,
  ]);
  const model = await startServer({ kind: 'model', reply: REPLY }, { name: 'model-long' });
  const dataDir = tempDir('long');
  // Seed the harness's store before it starts, the same words as the bare SDK's below.
  const store = await openStore({ dataDir });
  const random = prng(SEED);
  const ours: Target[] = [];
  const context = new ServerCallContext();
  const seedStart = performance.now();
  for (const length of seedLengths()) {
    const task = seededTask(length, random);
    await store.tasks.create(task, context);
    ours.push({ id: task.id, contextId: task.contextId });
  }
  await store.close();
  const harnessSeedMs = performance.now() - seedStart;
  const harness = await startServer(
    {
      kind: 'harness',
      dataDir,
      config: {
        defaultModel: 'fixture:small',
        detectOllama: false,
        admission: ADMIT_ALL,
        providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
      },
    },
    { name: 'harness-long' },
  );
  const bare = await startServer(
    { kind: 'bare', options: { reply: 'status', model: { baseURL: model.url, model: 'small' } } },
    { name: 'bare-long' },
  );
  try {
    const bareSeedStart = performance.now();
    const theirs = await bare.seed(seedLengths(), SEED);
    console.log(
      `seeded ${ours.length} tasks per side (${LEVELS.join(', ')} messages, 3 each, and 2 of 10 for the warm-up): harness store ${(harnessSeedMs / 1000).toFixed(1)} s, bare SDK store ${((performance.now() - bareSeedStart) / 1000).toFixed(1)} s\n`,
    );
    console.log('tiny-harness (SqlTaskStore on SQLite)');
    const h = await measureSide(harness.url, ours);
    await model.reset();
    console.log('bare SDK (DefaultRequestHandler + InMemoryTaskStore)');
    const b = await measureSide(bare.url, theirs);
    await model.reset();
    console.log(
      `the model request alone (the conversation as the harness sends it, the newest ${DEFAULT_CONTEXT_CHARS} characters, POSTed to the fixture)`,
    );
    const m = await measureModel(model.url);
    await model.reset();

    console.log('\nmedians (p99 in brackets)');
    const head = `${'messages'.padStart(8)} | ${'harness command'.padStart(22)} | ${'bare command'.padStart(22)} | ${'harness turn'.padStart(22)} | ${'bare turn'.padStart(22)} | ${'harness turn, h=1'.padStart(22)} | ${'bare turn, h=1'.padStart(22)} | ${'model alone'.padStart(22)}`;
    console.log(head);
    const cell = (s: Summary) => `${ms(s.median, 2, 9)} (${ms(s.p99, 1, 7)})`;
    for (const level of LEVELS) {
      const [hf, bf, mf] = [h.get(level)!, b.get(level)!, m.get(level)!];
      console.log(
        `${String(level).padStart(8)} | ${cell(hf.command)} | ${cell(bf.command)} | ${cell(hf.turn)} | ${cell(bf.turn)} | ${cell(hf.turnH1)} | ${cell(bf.turnH1)} | ${cell(mf)}`,
      );
    }
    console.log('reply body of the last request');
    for (const level of LEVELS) {
      const [hf, bf] = [h.get(level)!, b.get(level)!];
      console.log(
        `${String(level).padStart(8)} | command: harness ${kb(hf.commandBytes)}, bare ${kb(bf.commandBytes)} | turn: harness ${kb(hf.turnBytes)}, bare ${kb(bf.turnBytes)} | turn h=1: harness ${kb(hf.turnH1Bytes)}, bare ${kb(bf.turnH1Bytes)}`,
      );
    }
    const lo = LEVELS[0]!;
    const hi = LEVELS[LEVELS.length - 1]!;
    const ratio = (f: Map<number, LevelFigures>, pick: (x: LevelFigures) => Summary) =>
      pick(f.get(hi)!).median / pick(f.get(lo)!).median;
    const net = (pick: (x: LevelFigures) => Summary) =>
      (pick(h.get(hi)!).median - m.get(hi)!.median) / (pick(h.get(lo)!).median - m.get(lo)!.median);
    console.log(`\n${hi}/${lo} messages, medians:`);
    const rows: Array<[string, (x: LevelFigures) => Summary, boolean]> = [
      ['command', (x) => x.command, false],
      ['turn, historyLength unset', (x) => x.turn, true],
      ['turn, historyLength 1', (x) => x.turnH1, true],
    ];
    for (const [label, pick, isTurn] of rows) {
      const ours = ratio(h, pick);
      const extra = isTurn
        ? `; harness minus the model request alone x${net(pick).toFixed(2)} (model alone x${(m.get(hi)!.median / m.get(lo)!.median).toFixed(2)})`
        : '';
      console.log(
        `  ${label.padEnd(26)} harness x${ours.toFixed(2)}, bare SDK x${ratio(b, pick).toFixed(2)}; harness/bare at ${hi}: ${times(pick(h.get(hi)!).median, pick(b.get(hi)!).median)}${extra}`,
      );
    }
    for (const [label, pick] of rows) {
      const ours = ratio(h, pick);
      verdict(ours <= 2, `${label}: ${hi} messages cost x${ours.toFixed(2)} of ${lo} (goal: at most x2)`);
    }
  } finally {
    await Promise.all([harness.close(), bare.close(), model.close()]);
  }
  printVerdicts('long-conversations');
}

await main();
