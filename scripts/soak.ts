/**
 * A bounded soak of the harness: mixed traffic from concurrent workers for a fixed time, then a
 * check of everything the workers saw against the store.
 *
 *   node --import tsx scripts/soak.ts [--minutes M | --seconds S] [--workers N] [--transports jsonrpc,rest,grpc] [--chunk-delay MS]
 *
 * Defaults: 2 minutes, 8 workers, the three transports in turn (worker i uses transport i mod 3),
 * 4 ms between streamed chunks. Everything runs on 127.0.0.1 in this process: a fixture
 * OpenAI-compatible model (test/fixtures/model-server.ts) and the harness itself
 * (`startHarness`) on a temporary data dir, removed at the end.
 *
 * Each worker owns its tasks (up to three open at a time, in a context of its own) and runs one
 * operation at a time, chosen at random: a streamed turn, a blocking turn, a command, GetTask,
 * ListTasks, a cancel in the middle of a turn, SubscribeToTask during a turn or on an idle task
 * followed by a command, a command during a running turn, and a message deliberately sent
 * during a running turn (the only place the busy refusal, UnsupportedOperationError, is expected). Every
 * reply is checked as it comes (state, text, chunks in order and once, one final status). Any
 * other protocol error, an operation taking longer than 30 s, a warning printed by the server
 * or a warn/error line in its log counts as an error.
 *
 * At the end every task is read back: none left SUBMITTED or WORKING, each turn's stored
 * artifact equals what was streamed, no artifact lost or extra, no history message twice, every
 * command and its reply in the history once, no command text ever sent to the model; then the
 * harness is closed and the SQLite file is opened read-only for `PRAGMA integrity_check` and a
 * count of the command reply log. Prints a summary (requests by kind, errors, p50/p99 latency
 * per kind) and exits 1 on any error or inconsistency.
 *
 * `test/reliability/soak.test.ts` runs a 10-second version in `npm test`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import BetterSqlite3 from 'better-sqlite3';
import { parseConfig } from '../src/config/load.js';
import { startHarness } from '../src/harness.js';
import { createLogger } from '../src/log.js';
import { DATABASE_FILE_NAME } from '../src/store/index.js';
import { createClient, userMessage, type TransportName } from '../test/e2e/support.js';
import { startModelServer } from '../test/fixtures/model-server.js';
import {
  artifactText,
  checkDatabaseFile,
  errorText,
  historyCounts,
  lastUserText,
  messageText,
  newStreamRecord,
  percentile,
  recordEvent,
  type StreamRecord,
} from '../test/reliability/support.js';
import { within } from '../test/support/wait.js';

const { TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_INPUT_REQUIRED, TASK_STATE_CANCELED } = TaskState;

export const KINDS = [
  'stream',
  'send',
  'command',
  'get',
  'list',
  'cancel',
  'subscribe-turn',
  'subscribe-idle',
  'command-during-turn',
  'refused-during-turn',
] as const;
export type Kind = (typeof KINDS)[number];

/** How often each operation is picked, out of the sum. */
const WEIGHTS: Record<Kind, number> = {
  stream: 20,
  send: 15,
  command: 20,
  get: 10,
  list: 5,
  cancel: 5,
  'subscribe-turn': 7,
  'subscribe-idle': 5,
  'command-during-turn': 8,
  'refused-during-turn': 5,
};

const COMMANDS = ['/status', '/model fixture:large', '/model fixture:small', '/help', '/help model', '/model'];
const OP_TIMEOUT_MS = 30_000;
const MAX_OPEN_TASKS = 3;

export interface SoakOptions {
  durationMs: number;
  workers: number;
  transports?: readonly TransportName[];
  /** Delay before each streamed chunk at the fixture model (default 4 ms). */
  chunkDelayMs?: number;
  /** Progress lines (default: none). */
  progress?: (line: string) => void;
}

export interface SoakReport {
  durationMs: number;
  workers: number;
  requests: Record<Kind, number>;
  latency: Record<Kind, { p50: number; p99: number; max: number }>;
  /** Refusals of a message sent on purpose during a turn: expected. */
  expectedRefusals: number;
  errors: string[];
  inconsistencies: string[];
  tasks: number;
  turns: number;
  replies: number;
}

/** The fixture's reply to `<tag> say <n>`: n words, each naming the tag, so a mix-up shows. */
export function replyFor(tag: string, words: number): string {
  return Array.from({ length: words }, (_, i) => `${tag}.${i}`).join(' ');
}

interface OwnedTask {
  id: string;
  open: boolean;
  /** Artifact ids of the turns run on it, in order. */
  turns: { artifactId: string; text: string }[];
  replies: { commandId: string; replyId: string }[];
}

class Failure extends Error {}

/** Consumes a stream in the background: its record, and promises for the first chunk and the end. */
function consume(stream: AsyncGenerator<StreamResponse, void, undefined>, problems: string[]) {
  let firstChunk!: () => void;
  const chunked = new Promise<void>((resolve) => (firstChunk = resolve));
  let firstEvent!: () => void;
  const started = new Promise<void>((resolve) => (firstEvent = resolve));
  let record: StreamRecord | undefined;
  let first: StreamResponse | undefined;
  const done = (async () => {
    for await (const event of stream) {
      if (!first) {
        first = event;
        firstEvent();
        if (event.payload?.$case !== 'task') problems.push(`a stream began with ${event.payload?.$case}, not the task`);
        record = newStreamRecord(event.payload?.$case === 'task' ? event.payload.value.id : '?');
        continue;
      }
      const problem = recordEvent(record!, event);
      if (problem) problems.push(problem);
      if (event.payload?.$case === 'artifactUpdate') firstChunk();
    }
    // A turn with no chunk (or no event) at all: whoever waits for one goes on.
    firstChunk();
    firstEvent();
    if (!record) throw new Failure('a stream ended without any event');
    return record;
  })();
  done.catch(() => (firstChunk(), firstEvent()));
  return { chunked, started, done, first: () => first };
}

class SoakWorker {
  readonly tasks: OwnedTask[] = [];
  private readonly contextId = randomUUID();
  private seq = 0;

  constructor(
    private readonly index: number,
    private readonly client: Client,
    private readonly stats: Stats,
  ) {}

  private tag(): string {
    return `w${this.index}m${++this.seq}`;
  }

  private open(): OwnedTask[] {
    return this.tasks.filter((t) => t.open);
  }

  /** One of the worker's open tasks, or undefined to start a new one (always when it has none). */
  private pick(random: () => number, allowNew = true): OwnedTask | undefined {
    const open = this.open();
    if (open.length === 0 || (allowNew && open.length < MAX_OPEN_TASKS && random() < 0.2)) return undefined;
    return open[Math.floor(random() * open.length)];
  }

  private adopt(id: string): OwnedTask {
    let task = this.tasks.find((t) => t.id === id);
    if (!task) {
      task = { id, open: true, turns: [], replies: [] };
      this.tasks.push(task);
    }
    return task;
  }

  private check(condition: unknown, what: string): void {
    if (!condition) this.stats.inconsistencies.push(`worker ${this.index}: ${what}`);
  }

  async run(deadline: number, random: () => number): Promise<void> {
    const total = KINDS.reduce((n, k) => n + WEIGHTS[k], 0);
    // Every kind once first, in order (a turn first, so the worker owns a task) and whatever the
    // time, then at random until the deadline.
    for (let round = 0; round < KINDS.length || Date.now() < deadline; round++) {
      let roll = random() * total;
      const kind = round < KINDS.length ? KINDS[round]! : (KINDS.find((k) => (roll -= WEIGHTS[k]) < 0) ?? 'get');
      if (kind === 'get' || kind === 'list' || kind === 'subscribe-idle') {
        if (this.open().length === 0) continue; // nothing of its own to look at yet
      }
      const started = performance.now();
      try {
        await within(`${kind} (worker ${this.index})`, this.operation(kind, random), { timeoutMs: OP_TIMEOUT_MS });
        this.stats.record(kind, performance.now() - started);
      } catch (error) {
        this.stats.record(kind, performance.now() - started);
        this.stats.errors.push(`worker ${this.index} ${kind}: ${errorText(error)}`);
      }
    }
  }

  private operation(kind: Kind, random: () => number): Promise<void> {
    switch (kind) {
      case 'stream':
        return this.streamTurn(this.pick(random), 5 + Math.floor(random() * 25));
      case 'send':
        return this.blockingTurn(this.pick(random), 5 + Math.floor(random() * 25));
      case 'command':
        return this.command(this.pick(random), COMMANDS[Math.floor(random() * COMMANDS.length)]!).then(() => undefined);
      case 'get':
        return this.get(this.pick(random, false)!);
      case 'list':
        return this.list();
      case 'cancel':
        return this.cancel(this.pick(random));
      case 'subscribe-turn':
        return this.subscribeDuringTurn(this.pick(random));
      case 'subscribe-idle':
        return this.subscribeIdle(this.pick(random, false)!);
      case 'command-during-turn':
        return this.commandDuringTurn(this.pick(random));
      case 'refused-during-turn':
        return this.refusedDuringTurn(this.pick(random));
    }
  }

  private startStream(task: OwnedTask | undefined, tag: string, words: number) {
    const message = userMessage(`${tag} say ${words}`, { taskId: task?.id, contextId: this.contextId });
    return consume(
      this.client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} }),
      this.stats.inconsistencies,
    );
  }

  /** Checks a turn's stream as the turn's own client saw it, and records the turn on its task. */
  private checkTurnStream(
    record: StreamRecord,
    expected: string,
    state: TaskState = TASK_STATE_INPUT_REQUIRED,
  ): OwnedTask {
    const task = this.adopt(record.taskId);
    this.check(record.finals.length === 1, `${record.taskId}: ${record.finals.length} final statuses`);
    this.check(
      record.finals[0]?.state === state,
      `${record.taskId}: ended ${TaskState[record.finals[0]?.state ?? 0]}, expected ${TaskState[state]}`,
    );
    this.check(
      record.text === expected,
      `${record.taskId}: streamed "${record.text.slice(0, 80)}", expected "${expected.slice(0, 80)}"`,
    );
    if (state === TASK_STATE_INPUT_REQUIRED) {
      this.check(record.finals[0]?.text === expected, `${record.taskId}: the final message is not the streamed text`);
      this.check(record.lastChunks === 1, `${record.taskId}: ${record.lastChunks} last chunks`);
    }
    this.check(
      record.appendFlags[0] === false && record.appendFlags.slice(1).every(Boolean),
      `${record.taskId}: append flags ${record.appendFlags.join(',')}`,
    );
    if (record.artifactId) task.turns.push({ artifactId: record.artifactId, text: record.text });
    return task;
  }

  private async streamTurn(task: OwnedTask | undefined, words: number): Promise<void> {
    const tag = this.tag();
    const { done } = this.startStream(task, tag, words);
    this.checkTurnStream(await done, replyFor(tag, words));
  }

  private async blockingTurn(task: OwnedTask | undefined, words: number): Promise<void> {
    const tag = this.tag();
    const result = (await this.client.sendMessage({
      tenant: '',
      message: userMessage(`${tag} say ${words}`, { taskId: task?.id, contextId: this.contextId }),
      configuration: undefined,
      metadata: {},
    })) as Task;
    const owned = this.adopt(result.id);
    const expected = replyFor(tag, words);
    this.check(
      result.status?.state === TASK_STATE_INPUT_REQUIRED,
      `${result.id}: a blocking turn ended ${TaskState[result.status?.state ?? 0]}`,
    );
    this.check(
      messageText(result.status?.message) === expected,
      `${result.id}: a blocking turn answered "${messageText(result.status?.message).slice(0, 80)}"`,
    );
    const known = new Set(owned.turns.map((t) => t.artifactId));
    const fresh = result.artifacts.filter((a) => !known.has(a.artifactId));
    this.check(fresh.length === 1, `${result.id}: a blocking turn returned ${fresh.length} new artifacts`);
    this.check(
      artifactText(fresh[0]) === expected,
      `${result.id}: the blocking turn's artifact is "${artifactText(fresh[0]).slice(0, 80)}"`,
    );
    if (fresh[0]) owned.turns.push({ artifactId: fresh[0].artifactId, text: expected });
  }

  private async command(
    task: OwnedTask | undefined,
    text: string,
    expectedState: TaskState = TASK_STATE_INPUT_REQUIRED,
  ): Promise<string> {
    const commandId = randomUUID();
    const result = (await this.client.sendMessage({
      tenant: '',
      message: userMessage(text, { taskId: task?.id, contextId: this.contextId, messageId: commandId }),
      configuration: undefined,
      metadata: {},
    })) as Task;
    const owned = this.adopt(result.id);
    const reply = result.status?.message;
    const name = text.slice(1).split(' ')[0];
    this.check(
      reply?.metadata?.command === name,
      `${result.id}: the reply to ${text} has metadata ${JSON.stringify(reply?.metadata)}`,
    );
    this.check(
      result.status?.state === expectedState,
      `${result.id}: the reply to ${text} says ${TaskState[result.status?.state ?? 0]}, expected ${TaskState[expectedState]}`,
    );
    owned.replies.push({ commandId, replyId: reply?.messageId ?? '' });
    return reply?.messageId ?? '';
  }

  private async get(task: OwnedTask): Promise<void> {
    const got = await this.client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    this.check(
      got.status?.state === TASK_STATE_INPUT_REQUIRED,
      `${task.id}: GetTask says ${TaskState[got.status?.state ?? 0]} on an idle task`,
    );
    const artifacts = new Set(got.artifacts.map((a) => a.artifactId));
    this.check(
      task.turns.every((t) => artifacts.has(t.artifactId)),
      `${task.id}: GetTask misses an artifact`,
    );
  }

  private async list(): Promise<void> {
    const listed = await this.client.listTasks({
      tenant: '',
      contextId: this.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 100,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    });
    if (listed.totalSize > 100) return;
    const ids = new Set(listed.tasks.map((t) => t.id));
    this.check(
      this.tasks.every((t) => ids.has(t.id)),
      `ListTasks of the worker's context misses one of its tasks`,
    );
    this.check(
      listed.tasks.every((t) => t.status?.state !== TASK_STATE_WORKING && t.status?.state !== TASK_STATE_SUBMITTED),
      'ListTasks shows a task in flight while its worker is idle',
    );
  }

  private async cancel(task: OwnedTask | undefined): Promise<void> {
    const tag = this.tag();
    const expected = replyFor(tag, 80);
    const { chunked, done, first } = this.startStream(task, tag, 80);
    await chunked;
    const id = first()?.payload?.$case === 'task' ? (first()!.payload!.value as Task).id : undefined;
    if (!id) throw new Failure('the turn to cancel never said its task id');
    const canceled = await this.client.cancelTask({ tenant: '', id, metadata: {} });
    this.check(
      canceled.status?.state === TASK_STATE_CANCELED,
      `${id}: CancelTask returned ${TaskState[canceled.status?.state ?? 0]}`,
    );
    const record = await done;
    const owned = this.adopt(id);
    owned.open = false;
    this.check(record.finals.length === 1, `${id}: ${record.finals.length} final statuses after a cancel`);
    const endedAs = record.finals[0]?.state;
    // The turn may have ended on its own just before the cancel came; then the idle task was canceled.
    this.check(
      endedAs === TASK_STATE_CANCELED || (endedAs === TASK_STATE_INPUT_REQUIRED && record.text === expected),
      `${id}: a canceled turn ended ${TaskState[endedAs ?? 0]}`,
    );
    this.check(expected.startsWith(record.text), `${id}: the canceled turn's chunks are not a prefix of the reply`);
    if (record.artifactId) owned.turns.push({ artifactId: record.artifactId, text: record.text });
  }

  private async subscribeDuringTurn(task: OwnedTask | undefined): Promise<void> {
    const tag = this.tag();
    const expected = replyFor(tag, 40);
    const turn = this.startStream(task, tag, 40);
    await turn.chunked;
    const id = (turn.first()?.payload?.value as Task | undefined)?.id;
    if (!id) throw new Failure('the turn never said its task id');
    const subscription = consume(this.client.resubscribeTask({ tenant: '', id }), this.stats.inconsistencies);
    const [own, watched] = await Promise.all([turn.done, subscription.done]);
    this.checkTurnStream(own, expected);
    this.check(watched.finals.length === 1, `${id}: the subscription saw ${watched.finals.length} final statuses`);
    this.check(
      expected.endsWith(watched.text),
      `${id}: the subscription's chunks "${watched.text.slice(0, 60)}" are not the end of the reply`,
    );
    this.check(watched.finals[0]?.text === expected, `${id}: the subscription's final message differs`);
  }

  private async subscribeIdle(task: OwnedTask): Promise<void> {
    const subscription = consume(this.client.resubscribeTask({ tenant: '', id: task.id }), this.stats.inconsistencies);
    // The subscription is attached once its first event (the task) arrived.
    await within('the first event of a subscription', subscription.started);
    const replyId = await this.command(task, '/status');
    const watched = await subscription.done;
    this.check(
      watched.commandReplies.length === 1 && watched.commandReplies[0] === replyId,
      `${task.id}: the subscription saw replies ${watched.commandReplies.join(',')}, expected ${replyId}`,
    );
  }

  private async commandDuringTurn(task: OwnedTask | undefined): Promise<void> {
    const tag = this.tag();
    const turn = this.startStream(task, tag, 40);
    await turn.chunked;
    const id = (turn.first()?.payload?.value as Task | undefined)?.id;
    if (!id) throw new Failure('the turn never said its task id');
    const owned = this.adopt(id);
    const record0 = turn.done;
    // The turn may end before the command lands: then the reply says INPUT_REQUIRED.
    const commandId = randomUUID();
    const result = (await this.client.sendMessage({
      tenant: '',
      message: userMessage('/status', { taskId: id, contextId: this.contextId, messageId: commandId }),
      configuration: undefined,
      metadata: {},
    })) as Task;
    const reply = result.status?.message;
    owned.replies.push({ commandId, replyId: reply?.messageId ?? '' });
    this.check(
      reply?.metadata?.command === 'status',
      `${id}: the reply during a turn has metadata ${JSON.stringify(reply?.metadata)}`,
    );
    const record = await record0;
    this.checkTurnStream(record, replyFor(tag, 40));
    if (result.status?.state === TASK_STATE_WORKING) {
      this.check(
        record.commandReplies.filter((r) => r === reply?.messageId).length === 1,
        `${id}: the turn's stream saw the reply ${record.commandReplies.filter((r) => r === reply?.messageId).length} times`,
      );
    } else {
      this.check(
        result.status?.state === TASK_STATE_INPUT_REQUIRED,
        `${id}: the reply during a turn says ${TaskState[result.status?.state ?? 0]}`,
      );
    }
  }

  private async refusedDuringTurn(task: OwnedTask | undefined): Promise<void> {
    const tag = this.tag();
    const turn = this.startStream(task, tag, 40);
    await turn.chunked;
    const id = (turn.first()?.payload?.value as Task | undefined)?.id;
    if (!id) throw new Failure('the turn never said its task id');
    let refused = false;
    let accepted: Task | undefined;
    try {
      accepted = (await this.client.sendMessage({
        tenant: '',
        message: userMessage(`${this.tag()} say 3`, { taskId: id, contextId: this.contextId }),
        configuration: undefined,
        metadata: {},
      })) as Task;
    } catch (error) {
      if (!(error instanceof UnsupportedOperationError)) throw error;
      refused = true;
      this.stats.expectedRefusals += 1;
    }
    const record = await turn.done;
    this.checkTurnStream(record, replyFor(tag, 40));
    // Accepted only if the turn had ended by then, as a turn of its own.
    if (!refused) {
      this.check(
        accepted?.status?.state === TASK_STATE_INPUT_REQUIRED,
        `${id}: a message during a turn was neither refused nor a turn of its own`,
      );
      const owned = this.adopt(id);
      const known = new Set(owned.turns.map((t) => t.artifactId));
      const fresh = accepted!.artifacts.filter((a) => !known.has(a.artifactId));
      if (fresh[0]) owned.turns.push({ artifactId: fresh[0].artifactId, text: artifactText(fresh[0]) });
    }
  }
}

class Stats {
  readonly latencies = new Map<Kind, number[]>();
  readonly errors: string[] = [];
  readonly inconsistencies: string[] = [];
  expectedRefusals = 0;

  record(kind: Kind, ms: number): void {
    const list = this.latencies.get(kind) ?? [];
    list.push(ms);
    this.latencies.set(kind, list);
  }
}

/** A small seeded generator (mulberry32), so a run can be repeated with `--seed`. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function runSoak(options: SoakOptions & { seed?: number }): Promise<SoakReport> {
  const progress = options.progress ?? (() => {});
  const transports = options.transports ?? (['JSONRPC', 'HTTP+JSON', 'GRPC'] as const);
  const stats = new Stats();
  const model = await startModelServer({
    chunkDelayMs: options.chunkDelayMs ?? 4,
    reply: (body) => {
      const match = /(\S+) say (\d+)/.exec(lastUserText(body));
      return match ? replyFor(match[1]!, Number(match[2])) : 'no tag';
    },
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-soak-'));
  const logProblems: string[] = [];
  const log = createLogger((line) => {
    if (/^\S+ (warn|error) /.test(line)) logProblems.push(line.slice(0, 300));
  });
  // Whatever the server prints on the console or as a process warning is a problem too.
  const original = { error: console.error, warn: console.warn };
  const printed = (...args: unknown[]) =>
    logProblems.push(
      `console: ${args
        .map((a) => (a instanceof Error ? errorText(a) : String(a)))
        .join(' ')
        .slice(0, 3000)}`,
    );
  const onWarning = (warning: Error) => logProblems.push(`process warning: ${errorText(warning)}`);
  console.error = printed;
  console.warn = printed;
  process.on('warning', onWarning);
  const started = Date.now();
  let harness: Awaited<ReturnType<typeof startHarness>> | undefined;
  let workers: SoakWorker[] = [];
  try {
    const config = parseConfig(
      JSON.stringify({
        defaultModel: 'fixture:small',
        detectOllama: false,
        providers: { fixture: { type: 'openai-compatible', baseURL: model.baseURL, models: ['small', 'large'] } },
        // The workers share the harness's event loop, so their own load would read as its lag: the
        // soak counts what is lost or duplicated, and admission has tests of its own.
        admission: { maxEventLoopDelayMs: 0 },
      }),
    );
    harness = await startHarness({ config, dataDir, host: '127.0.0.1', port: 0, grpcPort: 0, env: {}, log });
    const random = seeded(options.seed ?? Date.now());
    workers = await Promise.all(
      Array.from(
        { length: options.workers },
        async (_, i) => new SoakWorker(i, await createClient(harness!.url, transports[i % transports.length]!), stats),
      ),
    );
    const deadline = Date.now() + options.durationMs;
    const ticker = setInterval(() => {
      const count = [...stats.latencies.values()].reduce((n, l) => n + l.length, 0);
      progress(
        `${Math.round((Date.now() - started) / 1000)} s: ${count} requests, ${stats.errors.length} errors, ${stats.inconsistencies.length} inconsistencies`,
      );
    }, 10_000);
    try {
      await Promise.all(workers.map((worker) => worker.run(deadline, random)));
    } finally {
      clearInterval(ticker);
    }
    await verifyTasks(harness.url, workers, stats, model.requests);
  } finally {
    await harness?.close();
    await model.close();
    console.error = original.error;
    console.warn = original.warn;
    process.off('warning', onWarning);
  }
  try {
    verifyFile(join(dataDir, DATABASE_FILE_NAME), workers, stats);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  stats.errors.push(...logProblems);

  const requests = {} as SoakReport['requests'];
  const latency = {} as SoakReport['latency'];
  for (const kind of KINDS) {
    const list = stats.latencies.get(kind) ?? [];
    requests[kind] = list.length;
    latency[kind] = { p50: percentile(list, 50), p99: percentile(list, 99), max: percentile(list, 100) };
  }
  const tasks = workers.flatMap((w) => w.tasks);
  return {
    durationMs: Date.now() - started,
    workers: options.workers,
    requests,
    latency,
    expectedRefusals: stats.expectedRefusals,
    errors: stats.errors,
    inconsistencies: stats.inconsistencies,
    tasks: tasks.length,
    turns: tasks.reduce((n, t) => n + t.turns.length, 0),
    replies: tasks.reduce((n, t) => n + t.replies.length, 0),
  };
}

/** Every task read back over the protocol and compared with what its worker saw. */
async function verifyTasks(
  url: string,
  workers: SoakWorker[],
  stats: Stats,
  modelRequests: { path: string; body: { messages?: unknown } }[],
): Promise<void> {
  const client = await createClient(url, 'JSONRPC');
  const problem = (text: string) => stats.inconsistencies.push(`store: ${text}`);
  for (const status of [TASK_STATE_SUBMITTED, TASK_STATE_WORKING]) {
    const listed = await client.listTasks({
      tenant: '',
      contextId: '',
      status,
      pageSize: 100,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    });
    if (listed.tasks.length > 0)
      problem(`${listed.tasks.length} tasks left ${TaskState[status]}: ${listed.tasks.map((t) => t.id).join(', ')}`);
  }
  for (const owned of workers.flatMap((w) => w.tasks)) {
    const task = await client.getTask({ tenant: '', id: owned.id, historyLength: undefined });
    const expectedState = owned.open ? TASK_STATE_INPUT_REQUIRED : TASK_STATE_CANCELED;
    if (task.status?.state !== expectedState)
      problem(`${owned.id} is ${TaskState[task.status?.state ?? 0]}, expected ${TaskState[expectedState]}`);
    const counts = historyCounts(task);
    for (const [id, count] of counts)
      if (count !== 1) problem(`${owned.id}: message ${id} is ${count} times in the history`);
    for (const { commandId, replyId } of owned.replies) {
      if (counts.get(commandId) !== 1)
        problem(`${owned.id}: the command ${commandId} is ${counts.get(commandId) ?? 0} times in the history`);
      if (counts.get(replyId) !== 1)
        problem(`${owned.id}: the reply ${replyId} is ${counts.get(replyId) ?? 0} times in the history`);
    }
    if (task.artifacts.length !== owned.turns.length)
      problem(`${owned.id}: ${task.artifacts.length} artifacts stored for ${owned.turns.length} turns`);
    for (const turn of owned.turns) {
      const stored = task.artifacts.find((a) => a.artifactId === turn.artifactId);
      if (!stored) problem(`${owned.id}: the artifact ${turn.artifactId} is missing`);
      else if (artifactText(stored) !== turn.text)
        problem(
          `${owned.id}: the artifact ${turn.artifactId} stored "${artifactText(stored).slice(0, 60)}", streamed "${turn.text.slice(0, 60)}"`,
        );
    }
  }
  // CMD-7: no command and no reply ever reached the model.
  for (const request of modelRequests.filter((r) => r.path.endsWith('/chat/completions'))) {
    const text = JSON.stringify(request.body?.messages ?? []);
    if (/"\/(status|model|help)\b|Turn running:|Current model/.test(text))
      problem('a command or its reply reached the model');
  }
}

/** The file itself, once the harness is closed: intact, nothing in flight, each reply logged once. */
function verifyFile(file: string, workers: SoakWorker[], stats: Stats): void {
  const problem = (text: string) => stats.inconsistencies.push(`file: ${text}`);
  const check = checkDatabaseFile(file);
  if (check.integrity.join() !== 'ok') problem(`integrity_check: ${check.integrity.join('; ')}`);
  if (check.foreignKeyProblems > 0) problem(`${check.foreignKeyProblems} foreign key problems`);
  if (check.tasksInFlight > 0) problem(`${check.tasksInFlight} tasks in flight after a clean stop`);
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    // A command's reply is kept with the claim of its message id (message_claims.reply_json).
    const count = db.prepare(
      'SELECT COUNT(*) AS n FROM message_claims WHERE task_id = ? AND message_id = ? AND reply_json IS NOT NULL',
    );
    let replies = 0;
    for (const owned of workers.flatMap((w) => w.tasks)) {
      for (const { commandId } of owned.replies) {
        replies += 1;
        const n = (count.get(owned.id, commandId) as { n: number }).n;
        if (n !== 1) problem(`${owned.id}: the reply to ${commandId} is logged ${n} times`);
      }
    }
    const total = (
      db.prepare('SELECT COUNT(*) AS n FROM message_claims WHERE reply_json IS NOT NULL').get() as { n: number }
    ).n;
    if (total !== replies) problem(`${total} command replies logged for ${replies} commands answered`);
  } finally {
    db.close();
  }
}

export function formatReport(report: SoakReport): string {
  const lines = [
    `soak: ${report.workers} workers for ${(report.durationMs / 1000).toFixed(1)} s`,
    `tasks ${report.tasks}, turns ${report.turns}, command replies ${report.replies}, expected refusals ${report.expectedRefusals}`,
    '',
    `${'kind'.padEnd(22)}${'requests'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}`,
  ];
  let total = 0;
  for (const kind of KINDS) {
    const { p50, p99, max } = report.latency[kind];
    total += report.requests[kind];
    lines.push(
      `${kind.padEnd(22)}${String(report.requests[kind]).padStart(9)}${p50.toFixed(1).padStart(9)}${p99.toFixed(1).padStart(9)}${max.toFixed(1).padStart(9)}`,
    );
  }
  lines.push(`${'total'.padEnd(22)}${String(total).padStart(9)}`, '');
  lines.push(`errors: ${report.errors.length}`);
  for (const error of report.errors.slice(0, 20)) lines.push(`  ${error}`);
  lines.push(`inconsistencies: ${report.inconsistencies.length}`);
  for (const problem of report.inconsistencies.slice(0, 20)) lines.push(`  ${problem}`);
  return lines.join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      seconds: { type: 'string' },
      workers: { type: 'string', default: '8' },
      transports: { type: 'string', default: 'jsonrpc,rest,grpc' },
      'chunk-delay': { type: 'string', default: '4' },
      seed: { type: 'string' },
    },
  });
  const durationMs =
    values.seconds !== undefined ? Number(values.seconds) * 1000 : Number(values.minutes ?? '2') * 60_000;
  const workers = Number(values.workers);
  const names: Record<string, TransportName> = {
    jsonrpc: 'JSONRPC',
    rest: 'HTTP+JSON',
    'http+json': 'HTTP+JSON',
    grpc: 'GRPC',
  };
  const transports = values.transports.split(',').map((t) => names[t.trim().toLowerCase()]);
  if (!(durationMs > 0) || !Number.isInteger(workers) || workers < 1 || transports.some((t) => !t)) {
    process.stderr.write(
      'usage: node --import tsx scripts/soak.ts [--minutes M | --seconds S] [--workers N] [--transports jsonrpc,rest,grpc] [--chunk-delay MS] [--seed N]\n',
    );
    return 2;
  }
  const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
  process.stderr.write(
    `soak: ${workers} workers, ${durationMs / 1000} s, transports ${transports.join(', ')}, seed ${seed}\n`,
  );
  const report = await runSoak({
    durationMs,
    workers,
    transports: transports as TransportName[],
    chunkDelayMs: Number(values['chunk-delay']),
    seed,
    progress: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${formatReport(report)}\n`);
  return report.errors.length + report.inconsistencies.length > 0 ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`soak failed: ${errorText(error)}\n`);
      process.exit(1);
    },
  );
}
