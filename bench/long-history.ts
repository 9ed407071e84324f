/**
 * What one command-like event costs on a task with a fresh history and on a task with 5,000
 * history messages: on our SqlTaskStore as the engine stores an event (`append`: the event
 * applied to the task and logged, in one transaction), and on the SDK's stores through the
 * SDK's real ResultManager (load, mutate, save the whole task per event). Before the engine's
 * log, SqlTaskStore was driven through the ResultManager too (`save` per event), with the same
 * events.
 *
 *   node --import tsx bench/long-history.ts [events=500] [history=5000]
 *
 * Each store gets up to `events` timed events per task, and at most 15 s per task (at least
 * 50 events): the SDK's own stores take tens of milliseconds an event on a long task.
 * Each event is a status update carrying a new agent message, like a command reply. Stores:
 * our SqlTaskStore on a temporary SQLite file, the SDK's InMemoryTaskStore as a baseline and
 * the SDK's DatabaseTaskStore on its own SQLite file (its tables made by the `a2a-db` bin).
 * SqlTaskStore also runs a long history plus many earlier turns' artifacts (each turn of the
 * harness streams one), since a store can grow in artifacts as well as in messages.
 * The goal: SqlTaskStore's long/fresh ratio of median latency at most 2.
 * A measurement, not a test: nothing here fails on a slow machine.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  InMemoryTaskStore,
  ResultManager,
  ServerCallContext,
  type AgentExecutionEvent,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { openStore, type SqlTaskStore } from '../src/store/index.js';
import { removeDir, tempDir } from './lib/cleanup.js';
import { openSdkSqliteStore } from './lib/sdk-sqlite-store.js';
import { header, printVerdicts, summarize, verdict } from './lib/report.js';
import { agentMessage as replyMessage } from '../src/runtime/events.js';

const EVENTS = Number(process.argv[2] ?? 500);
const LONG_HISTORY = Number(process.argv[3] ?? 5000);
const WARM_UP = 20;
const BUDGET_MS = 15_000;
const MIN_EVENTS = 50;
const context = new ServerCallContext();

/** A command reply, as the harness stores one. */
function agentMessage(taskId: string, contextId: string, text: string): Message {
  return { ...replyMessage(taskId, contextId, text), metadata: { command: 'status' } };
}

/** A task with `length` history messages and, optionally, earlier turns' streamed artifacts. */
function taskWithHistory(length: number, artifacts = 0, partsPerArtifact = 0): Task {
  const id = randomUUID();
  const contextId = randomUUID();
  const history = Array.from({ length: Math.max(1, length) }, (_, i) =>
    agentMessage(id, contextId, `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(4)}`),
  );
  history[0]!.role = Role.ROLE_USER;
  const streamed = Array.from({ length: artifacts }, (_, a) => ({
    artifactId: randomUUID(),
    name: 'response',
    description: `Reply ${a}`,
    parts: Array.from({ length: partsPerArtifact }, (_, p) => agentMessage(id, contextId, `chunk ${p} `).parts[0]!),
    metadata: {},
    extensions: [],
  }));
  return {
    id,
    contextId,
    status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: new Date().toISOString() },
    artifacts: streamed,
    history,
    metadata: {},
  };
}

/** How a store is given events: the way its server writes them. */
interface EventSink {
  /** Stores the task event that starts a task, then each later event of it. */
  write(event: AgentExecutionEvent): Promise<void>;
  load(taskId: string): Promise<Task | undefined>;
}

/** The SDK's stores: a result manager per event, as `DefaultRequestHandler` drives them (load, mutate, save). */
function throughResultManager(store: TaskStore): EventSink {
  return {
    write: (event) => new ResultManager(store, context).processEvent(event),
    load: (taskId) => store.load(taskId, context),
  };
}

/** Ours: as the engine stores events, a new task by `create`, each later event by `append`. */
function asTheEngine(store: SqlTaskStore): EventSink {
  return {
    write: async (event) => {
      if (event.kind === 'task') await store.create(event.data, context);
      else if (event.kind === 'statusUpdate') await store.append(event.data.taskId, context, [event]);
      else throw new Error(`no ${event.kind} events here`);
    },
    load: (taskId) => store.load(taskId, context),
  };
}

async function oneEvent(store: EventSink, task: Task, i: number): Promise<void> {
  const reply = agentMessage(task.id, task.contextId, `reply ${i}: the task is waiting for input.`);
  const event = AgentEvent.statusUpdate({
    taskId: task.id,
    contextId: task.contextId,
    status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: reply, timestamp: new Date().toISOString() },
    metadata: undefined,
  });
  await store.write(event);
}

interface Figures {
  median: number;
  p99: number;
  perSecond: number;
  n: number;
}

async function measure(store: EventSink, historyLength: number, artifacts = 0, partsPerArtifact = 0): Promise<Figures> {
  const task = taskWithHistory(historyLength, artifacts, partsPerArtifact);
  await store.write(AgentEvent.task(task));
  for (let i = 0; i < WARM_UP; i++) await oneEvent(store, task, -i);
  const times: number[] = [];
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(BUDGET_MS) * 1_000_000n;
  for (let i = 0; i < EVENTS && (i < MIN_EVENTS || process.hrtime.bigint() < deadline); i++) {
    const before = process.hrtime.bigint();
    await oneEvent(store, task, i);
    times.push(Number(process.hrtime.bigint() - before) / 1e6);
  }
  const totalMs = Number(process.hrtime.bigint() - start) / 1e6;
  const stored = await store.load(task.id);
  if (stored?.history.length !== Math.max(1, historyLength) + WARM_UP + times.length)
    throw new Error('the store lost messages');
  const s = summarize(times);
  return { median: s.median, p99: s.p99, perSecond: (times.length * 1000) / totalMs, n: times.length };
}

const ARTIFACTS = 500;
const PARTS_PER_ARTIFACT = 20;

function line(label: string, f: Figures): string {
  return `  ${label.padEnd(34)} median ${f.median.toFixed(3).padStart(8)} ms   p99 ${f.p99.toFixed(3).padStart(8)} ms   ${f.perSecond.toFixed(0).padStart(6)} events/s   (n=${f.n})`;
}

function ratio(label: string, long: Figures, fresh: Figures): string {
  return `  ${label}: median x${(long.median / fresh.median).toFixed(2)}, p99 x${(long.p99 / fresh.p99).toFixed(2)}, events/s x${(fresh.perSecond / long.perSecond).toFixed(2)}`;
}

/** Fresh vs long history; with `artifacts`, also a long history plus many earlier artifacts. */
async function run(name: string, store: EventSink, artifacts = false): Promise<void> {
  const fresh = await measure(store, 1);
  const long = await measure(store, LONG_HISTORY);
  console.log(`${name}`);
  console.log(line('fresh history', fresh));
  console.log(line(`${LONG_HISTORY} messages`, long));
  if (artifacts) {
    const heavy = await measure(store, LONG_HISTORY, ARTIFACTS, PARTS_PER_ARTIFACT);
    console.log(line(`${LONG_HISTORY} msgs + ${ARTIFACTS}x${PARTS_PER_ARTIFACT}-part artifacts`, heavy));
    console.log(ratio('long/fresh', long, fresh));
    console.log(ratio('long+artifacts/fresh', heavy, fresh));
    const r = long.median / fresh.median;
    verdict(
      r <= 2,
      `SqlTaskStore: an event on a ${LONG_HISTORY}-message task costs x${r.toFixed(2)} of one on a fresh task at the median (goal: at most x2)\n`,
    );
  } else {
    console.log(ratio('long/fresh', long, fresh) + '\n');
  }
}

async function main(): Promise<void> {
  const dir = tempDir('long-history');
  try {
    const store = await openStore({ dataDir: join(dir, 'ours') });
    const { rows } = await sql<{ v: string }>`select sqlite_version() as v`.execute(store.db);
    header('One store event (a status update carrying a message), written as each server writes it', [
      `command: node --import tsx bench/long-history.ts ${EVENTS} ${LONG_HISTORY}`,
      `sqlite ${rows[0]?.v}; up to ${EVENTS} timed events per task (at most ${BUDGET_MS / 1000} s, at least ${MIN_EVENTS}) after ${WARM_UP} warm-up events; in-process, no server`,
    ]);

    await run('SqlTaskStore (this project, SQLite file, WAL; append, as the engine)', asTheEngine(store.tasks), true);
    await store.close();
    await run('InMemoryTaskStore (SDK baseline; result manager)', throughResultManager(new InMemoryTaskStore()));

    let sdk;
    try {
      sdk = await openSdkSqliteStore(join(dir, 'sdk', 'a2a.db'));
    } catch (error) {
      console.log(`DatabaseTaskStore skipped: ${(error as Error).message}`);
      return;
    }
    await run('DatabaseTaskStore (SDK, SQLite file, WAL; result manager)', throughResultManager(sdk.store));
    await sdk.close();
    printVerdicts('long-history');
  } finally {
    removeDir(dir);
  }
}

await main();
