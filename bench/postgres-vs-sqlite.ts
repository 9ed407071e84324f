/**
 * The store on PostgreSQL against the store on SQLite: the same harness twice in the same run,
 * one on a SQLite file (the default), one on a PostgreSQL schema of its own (`databaseUrl`,
 * as `serve --database` runs it: one instance, its coordination through the database).
 *
 *   node --import tsx bench/postgres-vs-sqlite.ts [--rounds 3] [--seconds 3] [--levels 1,16] [--turns 10]
 *
 * Per round, the two servers alternate block by block (which goes first alternates by round,
 * so drift of the machine hits both alike):
 * - `/status` (blocking `SendMessage` on an existing task) at each level of concurrent clients,
 *   each client its own task, for `--seconds` after a half-second warm-up; latency, throughput,
 *   and CPU per request: the harness's own, and on PostgreSQL the database server's backends
 *   too (SQLite does that work inside the harness);
 * - `--turns` streamed model turns of each kind, one at a time, the servers alternating turn
 *   by turn: "burst" (200 tokens written at once) and "paced" (50 tokens 5 ms apart, each a
 *   stored event); time to the first token and to the end of the stream (`SendStreamingMessage`
 *   on a new task, raw SSE client), each reply checked against the fixture's.
 * The spread is the lowest and highest of the per-round medians. Servers and the fixture models
 * run in child processes, the clients here; the schema is dropped at the end. Goal (issue 23):
 * the harness's own CPU per `/status` on PostgreSQL at most x1.5 its CPU on SQLite.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Client } from '@a2a-js/sdk/client';
import { tempDir } from './lib/cleanup.js';
import {
  A2A_HEADERS,
  isTask,
  parseStreamEvent,
  partsText,
  postSse,
  sdkClient,
  sendText,
  streamingRequest,
  type Target,
} from './lib/clients.js';
import { benchSchema, postgresCpuMs } from './lib/postgres.js';
import { cpuMs, startServer, type ServerProcess, ADMIT_ALL } from './lib/processes.js';
import { header, latencyLine, ms, printVerdicts, summarize, times, verdict, type Summary } from './lib/report.js';
import { numberedReply, textOf } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    levels: { type: 'string', default: '1,16' },
    turns: { type: 'string', default: '10' },
  },
});
const ROUNDS = Number(flags.rounds);
const SECONDS = Number(flags.seconds);
const LEVELS = flags.levels.split(',').map(Number);
const TURNS = Number(flags.turns);
const WARM_UP_MS = 500;
const STORES = ['sqlite', 'postgres'] as const;
type StoreKind = (typeof STORES)[number];
const TURN_KINDS = [
  { name: 'burst', tokens: 200, delayMs: 0 },
  { name: 'paced', tokens: 50, delayMs: 5 },
] as const;
type TurnKind = (typeof TURN_KINDS)[number]['name'];
/** The context of each kind's turns, where `/model` chose that kind's fixture. */
const CONTEXTS: Record<TurnKind, string> = { burst: randomUUID(), paced: randomUUID() };

interface Side {
  server: ServerProcess;
  clients: Client[];
  tasks: Target[];
  /** Per level: every latency, and per round its median, requests, seconds and CPU. */
  status: Map<
    number,
    {
      latencies: number[];
      roundMedians: number[];
      requests: number;
      seconds: number;
      harnessCpu: number;
      databaseCpu: number;
    }
  >;
  /** Per turn kind: first token and whole stream, and per round the medians. */
  turns: Map<TurnKind, { ttft: number[]; whole: number[]; roundTtft: number[]; roundWhole: number[] }>;
}

const models = new Map<TurnKind, ServerProcess>();
const sides = new Map<StoreKind, Side>();

async function status(side: Side, i: number): Promise<void> {
  const answer = await sendText(side.clients[i]!, '/status', side.tasks[i]);
  if (!isTask(answer) || !textOf(answer.status?.message).includes('\nState: '))
    throw new Error('unexpected /status answer');
}

/** `level` clients, each sending /status on its own task one at a time, for the warm-up then `SECONDS`. */
async function statusBlock(side: Side, level: number): Promise<void> {
  const begin = performance.now();
  const from = begin + WARM_UP_MS;
  const until = from + SECONDS * 1000;
  const latencies: number[] = [];
  let before: { harness: Awaited<ReturnType<ServerProcess['cpu']>>; database: number | undefined } | undefined;
  const sampler = new Promise<void>((resolve) =>
    setTimeout(async () => {
      before = { database: postgresCpuMs(), harness: await side.server.cpu() };
      resolve();
    }, WARM_UP_MS),
  );
  await Promise.all(
    Array.from({ length: level }, async (_, i) => {
      while (performance.now() < until) {
        const start = performance.now();
        await status(side, i);
        const end = performance.now();
        if (start >= from && end <= until) latencies.push(end - start);
      }
    }),
  );
  await sampler;
  const harnessAfter = await side.server.cpu();
  const databaseAfter = postgresCpuMs();
  const figures = side.status.get(level) ?? {
    latencies: [],
    roundMedians: [],
    requests: 0,
    seconds: 0,
    harnessCpu: 0,
    databaseCpu: 0,
  };
  figures.latencies.push(...latencies);
  figures.roundMedians.push(summarize(latencies).median);
  figures.requests += latencies.length;
  figures.seconds += SECONDS;
  figures.harnessCpu += cpuMs(before!.harness, harnessAfter);
  // NaN where there is no /proc to read PostgreSQL's CPU from: printed as NaN.
  figures.databaseCpu +=
    before!.database !== undefined && databaseAfter !== undefined ? databaseAfter - before!.database : NaN;
  side.status.set(level, figures);
}

const tokenCount = (text: string) => text.match(/t\d+/g)?.length ?? 0;

/** One streamed turn on a new task, with the model of `kind`; its reply checked. */
async function turn(side: Side, kind: (typeof TURN_KINDS)[number]): Promise<{ ttft: number; whole: number }> {
  const expected = numberedReply(kind.tokens);
  let first: number | undefined;
  let text = '';
  let final = '';
  const body = streamingRequest('Say something.') as { params: { message: { contextId?: string } } };
  body.params.message.contextId = CONTEXTS[kind.name];
  const result = await postSse(`${side.server.url}/a2a/jsonrpc`, body, {
    headers: A2A_HEADERS,
    keep: false,
    onEvent: (event) => {
      const r = parseStreamEvent(event.data);
      const piece = partsText(r.artifactUpdate?.artifact.parts);
      if (piece) {
        first ??= event.at;
        text += piece;
      }
      if (r.statusUpdate?.status?.state === 'TASK_STATE_INPUT_REQUIRED')
        final = partsText(r.statusUpdate.status.message?.parts);
    },
  });
  if (text !== expected || final !== expected)
    throw new Error(
      `${kind.name} turn: the stream says ${tokenCount(text)} tokens "${text.slice(0, 40)}…", final "${final.slice(0, 40)}…"`,
    );
  return { ttft: first! - result.start, whole: result.end - result.start };
}

function turnFigures(side: Side, kind: TurnKind) {
  let figures = side.turns.get(kind);
  if (!figures) side.turns.set(kind, (figures = { ttft: [], whole: [], roundTtft: [], roundWhole: [] }));
  return figures;
}

const spread = (medians: number[]) =>
  `round medians ${ms(Math.min(...medians), 2, 0).trim()} to ${ms(Math.max(...medians), 2, 0).trim()}`;

/** Issue 23: the harness's own CPU per command on PostgreSQL, at most this many times its CPU on SQLite. */
const GOAL_HARNESS_CPU_RATIO = 1.5;

function report(): void {
  const sqlite = sides.get('sqlite')!;
  const postgres = sides.get('postgres')!;
  for (const level of LEVELS) {
    console.log(`/status, ${level} concurrent client${level === 1 ? '' : 's'} (${ROUNDS} x ${SECONDS} s each)`);
    const lines = STORES.map((store) => {
      const f = sides.get(store)!.status.get(level)!;
      const s = summarize(f.latencies);
      const perSecond = f.requests / f.seconds;
      const harness = f.harnessCpu / f.requests;
      const database = store === 'postgres' ? f.databaseCpu / f.requests : 0;
      console.log(
        latencyLine(
          `on ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
          s,
          `${perSecond.toFixed(0)} req/s; ${spread(f.roundMedians)}`,
        ),
      );
      console.log(
        `  ${''.padEnd(34)} CPU per request: harness ${harness.toFixed(2)} ms` +
          (store === 'postgres'
            ? `, PostgreSQL's backends ${database.toFixed(2)} ms, together ${(harness + database).toFixed(2)} ms`
            : ' (the store included)'),
      );
      return { s, perSecond, cpu: harness + database, harness };
    });
    const [lite, pg] = lines as [(typeof lines)[0], (typeof lines)[0]];
    console.log(
      `  PostgreSQL/SQLite: median ${times(pg.s.median, lite.s.median)}, p99 ${times(pg.s.p99, lite.s.p99)}, throughput ${times(pg.perSecond, lite.perSecond)}, ` +
        `harness CPU per request ${times(pg.harness, lite.harness)}, CPU per request with the database's ${times(pg.cpu, lite.cpu)}`,
    );
    verdict(
      pg.harness <= lite.harness * GOAL_HARNESS_CPU_RATIO,
      `${level} client${level === 1 ? '' : 's'}: the harness's own CPU per /status on PostgreSQL ${times(pg.harness, lite.harness)} its CPU on SQLite (goal, issue 23: at most x${GOAL_HARNESS_CPU_RATIO})\n`,
    );
  }
  for (const kind of TURN_KINDS) {
    console.log(
      `streamed turn, ${kind.name}: ${kind.tokens} tokens${kind.delayMs ? ` ${kind.delayMs} ms apart` : ' written at once'} (${ROUNDS} x ${TURNS} per server)`,
    );
    const [lite, pg] = [sqlite, postgres].map((side) => side.turns.get(kind.name)!);
    const rows: Array<[string, number[], number[]]> = [
      ['first token', lite!.ttft, pg!.ttft],
      ['whole turn', lite!.whole, pg!.whole],
    ];
    for (const [label, a, b] of rows) {
      const roundsOf = (side: typeof lite) => (label === 'first token' ? side!.roundTtft : side!.roundWhole);
      const [sa, sb] = [summarize(a), summarize(b)] as [Summary, Summary];
      console.log(latencyLine(`${label}, SQLite`, sa, spread(roundsOf(lite))));
      console.log(latencyLine(`${label}, PostgreSQL`, sb, spread(roundsOf(pg))));
      console.log(
        `  PostgreSQL/SQLite: median ${times(sb.median, sa.median)} (${ms(sb.median - sa.median, 2, 0).trim()}), p99 ${times(sb.p99, sa.p99)}`,
      );
    }
    console.log('');
  }
}

async function main(): Promise<void> {
  const schema = await benchSchema('postgres-vs-sqlite');
  try {
    header('The store on PostgreSQL against SQLite: /status and streamed turns, one harness each', [
      `command: node --import tsx bench/postgres-vs-sqlite.ts --rounds ${ROUNDS} --seconds ${SECONDS} --levels ${LEVELS.join(',')} --turns ${TURNS}`,
      `${schema.version} at ${schema.where} (schema ${schema.schema}, dropped at the end), on this machine; SQLite in the temp folder (durability "normal"). ` +
        `Per round: /status for ${SECONDS} s per level (${LEVELS.join(', ')} clients, SDK JSON-RPC client, each client its own task), then ${TURNS} turns of each kind per server ` +
        `(SendStreamingMessage, new task, raw SSE client), the servers alternating; ${ROUNDS} rounds, which server goes first alternating by round.`,
    ]);
    for (const kind of TURN_KINDS)
      models.set(
        kind.name,
        await startServer(
          { kind: 'model', reply: numberedReply(kind.tokens), chunkDelayMs: kind.delayMs },
          { name: `model-${kind.name}` },
        ),
      );
    for (const store of STORES) {
      const server = await startServer(
        {
          kind: 'harness',
          dataDir: tempDir(`pg-vs-sqlite-${store}`),
          databaseUrl: store === 'postgres' ? schema.url : undefined,
          config: {
            defaultModel: 'burst:small',
            detectOllama: false,
            admission: ADMIT_ALL,
            providers: Object.fromEntries(
              TURN_KINDS.map((kind) => [
                kind.name,
                { type: 'openai-compatible', baseURL: models.get(kind.name)!.url, models: ['small'] },
              ]),
            ),
          },
        },
        { name: `harness-${store}` },
      );
      const clients = await Promise.all(Array.from({ length: Math.max(...LEVELS) }, () => sdkClient(server.url)));
      const tasks: Target[] = [];
      for (const client of clients) {
        const made = await sendText(client, '/status');
        if (!isTask(made)) throw new Error('/status without a task made no task');
        tasks.push({ id: made.id, contextId: made.contextId });
      }
      // A new task starts with the model last chosen in its context: each turn kind has a context.
      for (const kind of TURN_KINDS) {
        const chosen = await sendText(clients[0]!, `/model ${kind.name}:small`, {
          id: '',
          contextId: CONTEXTS[kind.name],
        });
        if (!isTask(chosen) || !textOf(chosen.status?.message).includes(`${kind.name}:small`))
          throw new Error(`/model ${kind.name}:small was not taken`);
      }
      sides.set(store, { server, clients, tasks, status: new Map(), turns: new Map() });
    }
    // Warm-up: commands and turns of each kind on both, before anything is timed.
    for (const side of sides.values()) {
      for (let i = 0; i < 30; i++) await status(side, 0);
      for (const kind of TURN_KINDS) for (let i = 0; i < 3; i++) await turn(side, kind);
    }

    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? STORES : ([...STORES].reverse() as StoreKind[]);
      for (const level of LEVELS) for (const store of order) await statusBlock(sides.get(store)!, level);
      for (const kind of TURN_KINDS) {
        const samples = new Map<StoreKind, Array<{ ttft: number; whole: number }>>(STORES.map((store) => [store, []]));
        for (let i = 0; i < TURNS; i++)
          for (const store of order) samples.get(store)!.push(await turn(sides.get(store)!, kind));
        for (const store of STORES) {
          const figures = turnFigures(sides.get(store)!, kind.name);
          const mine = samples.get(store)!;
          figures.ttft.push(...mine.map((s) => s.ttft));
          figures.whole.push(...mine.map((s) => s.whole));
          figures.roundTtft.push(summarize(mine.map((s) => s.ttft)).median);
          figures.roundWhole.push(summarize(mine.map((s) => s.whole)).median);
        }
        await models.get(kind.name)!.reset(); // the fixture records every request; keep its memory flat
      }
      console.log(`  round ${round + 1} of ${ROUNDS} done`);
    }
    console.log('');
    report();
  } finally {
    for (const side of sides.values()) await side.server.close();
    for (const model of models.values()) await model.close();
    await schema.drop();
  }
  printVerdicts('postgres-vs-sqlite');
}

await main();
