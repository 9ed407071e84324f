/**
 * The cross-instance delay of issue 10: a command sent to instance B while the task's turn
 * streams from instance A, until its reply is seen in A's open stream. Goal: at most 5 ms at
 * the median on loopback. Baseline in the same run: the same on one instance (the command sent
 * to A, its reply seen in A's stream).
 *
 *   node --import tsx bench/cross-instance.ts [--commands 300] [--per-turn 10] [--warm-up 20] [--steps]
 *
 * Two harness processes, A and B, on one PostgreSQL schema of the benchmark's own, and a
 * fixture model in a third, which holds each reply after two chunks until released, so the
 * turn is surely running while the commands are sent. Per held turn (a new task streamed from
 * A with a raw SSE client), `--per-turn` commands to each of B and A, one at a time, alternating:
 * blocking `SendMessage` "/status" with the SDK's client (so the task's history stays short). Timed from just before the request is written
 * until A's stream delivers the reply (the next status update carrying a message; checked
 * afterwards to be the reply the command's answer names, and each reply to be in the stream
 * once). The turn is then released and must end with its final status. `--commands` commands
 * of each kind in all, after a warm-up; the schema is dropped at the end. `--steps` also says
 * where the time goes, step by step (bench/lib/step-trace.ts: commit, NOTIFY, read, A's stream).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { tempDir } from './lib/cleanup.js';
import {
  A2A_HEADERS,
  isTask,
  parseStreamEvent,
  postSse,
  sdkClient,
  sendText,
  streamingRequest,
  type SseResult,
  type Target,
} from './lib/clients.js';
import { benchSchema } from './lib/postgres.js';
import { stepBreakdown, STEP_TRACE_VARIABLE, type ClientMarks } from './lib/step-trace.js';
import { startServer, type ServerProcess, ADMIT_ALL } from './lib/processes.js';
import { header, latencyLine, ms, printVerdicts, summarize, verdict } from './lib/report.js';
import { numberedReply } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    commands: { type: 'string', default: '300' },
    'per-turn': { type: 'string', default: '10' },
    'warm-up': { type: 'string', default: '20' },
    steps: { type: 'boolean', default: false },
  },
});
const COMMANDS = Number(flags.commands);
const PER_TURN = Number(flags['per-turn']);
const WARM_UP = Number(flags['warm-up']);
const GOAL_MS = 5;
/** Issue 23: what crossing instances adds to a command's reply in another instance's stream, at the median. */
const GOAL_ADDED_MS = 3;
const REPLY = numberedReply(20);
const IDLE_TIMEOUT_MS = 60_000;

type Route = 'B to A' | 'A to A';
const ROUTES: Route[] = ['B to A', 'A to A'];

interface Timing {
  /** From writing the command to its reply in A's stream. */
  seen: number;
  /** From writing the command to its answer. */
  answered: number;
  /** The same as wall-clock times, with the reply's id, for `--steps`. */
  marks: ClientMarks;
}

/** A turn streaming from A, held by the fixture until released; command replies are handed to whoever waits. */
class HeldTurn {
  task!: Target;
  readonly replies: string[] = [];
  private waiter: ((reply: { at: number; messageId: string }) => void) | undefined;
  private finalState = '';
  private started!: () => void;
  private readonly running = new Promise<void>((resolve) => (this.started = resolve));
  private ended!: Promise<SseResult>;
  private readonly key = randomUUID().replaceAll('-', '');

  constructor(
    private readonly a: ServerProcess,
    private readonly model: ServerProcess,
  ) {}

  /** Starts the turn; resolves once its first text arrived, so the model is holding it. */
  async start(): Promise<void> {
    this.ended = postSse(`${this.a.url}/a2a/jsonrpc`, streamingRequest(`HOLD-${this.key} Say something.`), {
      headers: A2A_HEADERS,
      keep: false,
      idleTimeoutMs: IDLE_TIMEOUT_MS,
      onEvent: (event) => {
        const r = parseStreamEvent(event.data);
        if (r.task) this.task = { id: r.task.id, contextId: r.task.contextId };
        if (r.artifactUpdate) this.started();
        const update = r.statusUpdate;
        if (!update) return;
        this.finalState = update.status?.state ?? '';
        const messageId = (update.status?.message as { messageId?: string } | undefined)?.messageId;
        if (update.status?.state === 'TASK_STATE_WORKING' && messageId) {
          this.replies.push(messageId);
          this.waiter?.({ at: event.at, messageId });
          this.waiter = undefined;
        }
      },
    });
    this.ended.catch(() => this.started());
    await this.running;
  }

  /** The next command reply A's stream delivers. */
  nextReply(): Promise<{ at: number; messageId: string }> {
    return new Promise((resolve) => (this.waiter = resolve));
  }

  /** Lets the model finish; resolves once the stream ended with the final status. */
  async finish(): Promise<void> {
    await this.model.release(this.key);
    await this.ended;
    if (this.finalState !== 'TASK_STATE_INPUT_REQUIRED')
      throw new Error(`the turn's stream ended with ${this.finalState || 'no status'}`);
  }
}

/** Sends "/status" to `client` on the held turn's task; times it until its reply is in A's stream. */
async function command(client: Client, turn: HeldTurn, route: Route): Promise<Timing> {
  const seen = turn.nextReply();
  const start = performance.now();
  const answer = await sendText(client, '/status', turn.task);
  const answered = performance.now() - start;
  const reply = await seen;
  if (!isTask(answer) || answer.status?.state !== TaskState.TASK_STATE_WORKING)
    throw new Error(
      `/status during the turn answered ${isTask(answer) ? TaskState[answer.status?.state ?? 0] : 'a message'}, not WORKING (CMD-9)`,
    );
  const replyId = answer.status.message?.messageId;
  if (reply.messageId !== replyId)
    throw new Error(`A's stream delivered reply ${reply.messageId}, the answer names ${replyId}`);
  const wall = (t: number) => performance.timeOrigin + t;
  return {
    seen: reply.at - start,
    answered,
    marks: { route, replyId: replyId!, sent: wall(start), answered: wall(start + answered), seen: wall(reply.at) },
  };
}

/** Nearest-rank p95, which `summarize` does not give. */
function p95(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const schema = await benchSchema('cross-instance');
  const started: ServerProcess[] = [];
  try {
    header("Cross-instance delay: a command sent to instance B until its reply is seen in instance A's stream", [
      `command: node --import tsx bench/cross-instance.ts --commands ${COMMANDS} --per-turn ${PER_TURN} --warm-up ${WARM_UP}${flags.steps ? ' --steps' : ''}`,
      `${schema.version} at ${schema.where} (schema ${schema.schema}, dropped at the end), on this machine; two harness processes (serve --database, as startHarness({ databaseUrl })) and the fixture model in child processes, the clients here.`,
      `Per held turn (new task streamed from A, the fixture holding its reply): ${PER_TURN} blocking SendMessage "/status" to each of B and A, one at a time, alternating (SDK JSON-RPC client); ` +
        `${COMMANDS} of each after ${WARM_UP} of each to warm up; timed from writing the request to the reply's event in A's stream (raw SSE client).`,
    ]);
    // Set before the servers start: they inherit it (bench/lib/step-trace.ts).
    const stepsDir = flags.steps ? tempDir('cross-instance-steps') : undefined;
    if (stepsDir) process.env[STEP_TRACE_VARIABLE] = stepsDir;
    const model = await startServer({ kind: 'model', reply: REPLY }, { name: 'model' });
    started.push(model);
    const config = {
      defaultModel: 'fixture:small',
      detectOllama: false,
      admission: ADMIT_ALL,
      providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
    };
    const [a, b] = await Promise.all(
      ['a', 'b'].map((name) =>
        startServer(
          { kind: 'harness', dataDir: tempDir(`cross-instance-${name}`), databaseUrl: schema.url, config },
          { name: `harness-${name}` },
        ),
      ),
    );
    started.push(a!, b!);
    const clients: Record<Route, Client> = { 'B to A': await sdkClient(b!.url), 'A to A': await sdkClient(a!.url) };

    const timings: Record<Route, Timing[]> = { 'B to A': [], 'A to A': [] };
    const roundMedians: Record<Route, number[]> = { 'B to A': [], 'A to A': [] };
    let turns = 0;
    let warm = 0;
    while (timings['B to A'].length < COMMANDS) {
      const turn = new HeldTurn(a!, model);
      await turn.start();
      turns++;
      const sent: Record<Route, number[]> = { 'B to A': [], 'A to A': [] };
      for (let i = 0; i < PER_TURN && timings['B to A'].length < COMMANDS; i++) {
        // Alternate which route goes first, so neither always follows the other's write.
        for (const route of i % 2 === 0 ? ROUTES : [...ROUTES].reverse()) {
          const timing = await command(clients[route], turn, route);
          if (warm < 2 * WARM_UP) {
            warm++;
            continue;
          }
          timings[route].push(timing);
          sent[route].push(timing.seen);
        }
      }
      await turn.finish();
      const unique = new Set(turn.replies);
      if (unique.size !== turn.replies.length)
        throw new Error(`a command reply reached A's stream twice (turn ${turns})`);
      for (const route of ROUTES) if (sent[route].length) roundMedians[route].push(summarize(sent[route]).median);
      await model.reset();
    }

    console.log(
      `${turns} held turns on A, ${COMMANDS} commands per route; every reply seen in A's stream once, in the order sent; every turn ended with its final status`,
    );
    const medians = {} as Record<Route, number>;
    for (const route of ROUTES) {
      const seen = timings[route].map((t) => t.seen);
      const s = summarize(seen);
      medians[route] = s.median;
      const label = route === 'B to A' ? "command to B, reply in A's stream" : "command to A, reply in A's stream";
      console.log(
        latencyLine(
          label,
          s,
          `p95 ${ms(p95(seen), 2, 0).trim()}; per-turn medians ${ms(Math.min(...roundMedians[route]), 2, 0).trim()} to ${ms(Math.max(...roundMedians[route]), 2, 0).trim()}`,
          40,
        ),
      );
    }
    for (const route of ROUTES) {
      const label = route === 'B to A' ? 'command to B, its answer' : 'command to A, its answer';
      console.log(latencyLine(label, summarize(timings[route].map((t) => t.answered)), '', 40));
    }
    const crossOnly = summarize(timings['B to A'].map((t) => t.seen - t.answered));
    console.log(
      `  reply in A's stream after B's answer: median ${ms(crossOnly.median, 2, 0).trim()} (negative: before the answer reached the client)`,
    );
    console.log(
      `  cross-instance over one instance: ${ms(medians['B to A'] - medians['A to A'], 2, 0).trim()} at the median; load average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    if (stepsDir) {
      // The servers write their marks as they exit.
      for (const server of started.splice(0).reverse()) await server.close();
      console.log('\nwhere the time goes (--steps: marks in the servers and the client, one clock)');
      for (const line of stepBreakdown(
        stepsDir,
        [...timings['B to A'], ...timings['A to A']].map((t) => t.marks),
      ))
        console.log(line);
      console.log('');
    }
    verdict(
      medians['B to A'] <= GOAL_MS,
      `a command sent to B is seen in A's stream ${ms(medians['B to A'], 2, 0).trim()} after it was sent, at the median (goal: at most ${GOAL_MS} ms on loopback; one instance: ${ms(medians['A to A'], 2, 0).trim()})`,
    );
    verdict(
      medians['B to A'] - medians['A to A'] <= GOAL_ADDED_MS,
      `crossing instances adds ${ms(medians['B to A'] - medians['A to A'], 2, 0).trim()} to a command's reply in another instance's stream, at the median (goal, issue 23: at most ${GOAL_ADDED_MS} ms on a quiet machine)`,
    );
  } finally {
    for (const server of started.reverse()) await server.close();
    await schema.drop();
  }
  printVerdicts('cross-instance');
}

await main();
