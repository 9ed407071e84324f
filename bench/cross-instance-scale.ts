/**
 * Events across instances under load (issue 10): bench/scale.ts's load, streamed turns on a
 * fixture model that emits a token every 20 ms, spread round-robin over three harness
 * processes on one PostgreSQL schema, each task followed by a subscriber on another instance.
 * Goal: every event delivered across instances, in order, once. A command reply may sit at
 * another place among the turn's own events in the subscriber's stream than in the turn's: each
 * stream sends events in the order they reached its instance, and both orders leave the same
 * task. That is counted and shown, and not held against the goal.
 *
 *   node --import tsx bench/cross-instance-scale.ts [--turns 300] [--tokens 50] [--delay 20] [--commands 100] [--ramp-ms 1000] [--instances 3] [--no-baseline]
 *
 * Turn i streams from instance i mod 3 (`SendStreamingMessage`, raw SSE client); as soon as its
 * first event names the task, `SubscribeToTask` on instance i+1 mod 3 follows it. Meanwhile
 * "/status" commands, one at a time 10 ms apart, go to instance i+2 mod 3 for a random running
 * task i, so command replies cross instances too. Checked for every turn:
 * - its own stream, as bench/scale.ts checks it: the task first, the tokens in order and each
 *   once, the final INPUT_REQUIRED status last, carrying the whole reply;
 * - the subscriber's: after the task as it stood, exactly the last events of the turn's stream,
 *   in the same order, each once; the task it was sent plus the text it received leave no gap
 *   in the reply; its last event the final status;
 * - the stored task (`GetTask` on instance i+2): the final status and the whole reply, and each
 *   command reply seen in the streams in its history once.
 * A subscription that arrived after the turn ended gets the finished task and waits for what
 * comes next; it is closed, and counted, but not held against the goal. A subscriber silent for
 * 60 s has lost its stream's end and fails. Baseline in the same run: the same load on one
 * instance on SQLite, each subscriber on that instance. Servers and the fixture run in child
 * processes, the clients here; the schema is dropped at the end.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { TaskState } from '@a2a-js/sdk';
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
  type StreamResult,
} from './lib/clients.js';
import { benchSchema } from './lib/postgres.js';
import { startServer, type ServerProcess, ADMIT_ALL } from './lib/processes.js';
import { header, latencyLine, printVerdicts, sleep, summarize, verdict } from './lib/report.js';
import { numberedReply, textOf } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    turns: { type: 'string', default: '300' },
    tokens: { type: 'string', default: '50' },
    delay: { type: 'string', default: '20' },
    commands: { type: 'string', default: '100' },
    'ramp-ms': { type: 'string', default: '1000' },
    instances: { type: 'string', default: '3' },
    'no-baseline': { type: 'boolean', default: false },
  },
});
const TURNS = Number(flags.turns);
const TOKENS = Number(flags.tokens);
const DELAY = Number(flags.delay);
const COMMANDS = Number(flags.commands);
const RAMP_MS = Number(flags['ramp-ms']);
const INSTANCES = Number(flags.instances);
const IDLE_TIMEOUT_MS = 120_000;
/** A subscriber silent this long has lost its stream's end: it fails. */
const SUBSCRIBER_IDLE_MS = 60_000;
const REPLY = numberedReply(TOKENS);

/** One stream's events: each `result` as JSON (to compare) and parsed. */
interface Received {
  json: string[];
  parsed: StreamResult[];
}

interface TurnOutcome {
  index: number;
  taskId?: string;
  turn: Received;
  subscriber: Received;
  turnError?: string;
  subscriberError?: string;
  /** The subscription came after the turn had ended. */
  late: boolean;
  duration: number;
}

function received(): Received {
  return { json: [], parsed: [] };
}

function keep(into: Received, data: string): StreamResult {
  const result = parseStreamEvent(data);
  into.json.push(JSON.stringify(result));
  into.parsed.push(result);
  return result;
}

const artifactText = (events: StreamResult[]) =>
  events.map((r) => partsText(r.artifactUpdate?.artifact.parts)).join('');
const isFinal = (r: StreamResult | undefined) => r?.statusUpdate?.status?.state === 'TASK_STATE_INPUT_REQUIRED';
/** A subscription's first event: the task as it stood, already waiting for input when its turn had ended. */
const finishedTask = (r: StreamResult | undefined) => r?.task?.status?.state === 'TASK_STATE_INPUT_REQUIRED';
/** The text of the artifacts of a task event (JSON-RPC form). */
const taskText = (r: StreamResult) =>
  ((r.task as { artifacts?: Array<{ parts?: Array<{ text?: string }> }> }).artifacts ?? [])
    .map((a) => partsText(a.parts))
    .join('');
const replyIds = (events: StreamResult[]) =>
  events.flatMap((r) =>
    r.statusUpdate?.status?.state === 'TASK_STATE_WORKING' && r.statusUpdate.status.message
      ? [(r.statusUpdate.status.message as { messageId: string }).messageId]
      : [],
  );

const REPLY_PLACED_ELSEWHERE = "the same events, but a command reply at another place among the turn's events";

/** The turn's own stream, as bench/scale.ts checks it; undefined when right. */
function turnProblem(events: StreamResult[]): string | undefined {
  if (!events[0]?.task) return 'first event is not the task';
  let next = 0;
  for (const [i, r] of events.entries()) {
    if (i > 0 && r.task) return `a second task event at ${i}`;
    for (const token of partsText(r.artifactUpdate?.artifact.parts).match(/t\d+/g) ?? []) {
      if (token !== `t${next}`) return `token ${token} where t${next} was due`;
      next++;
    }
    const state = r.statusUpdate?.status?.state;
    if (r.statusUpdate && i < events.length - 1 && state !== 'TASK_STATE_WORKING')
      return `status ${state} before the end`;
  }
  const last = events[events.length - 1];
  if (!isFinal(last)) return 'last event is not the final status';
  if (artifactText(events) !== REPLY) return 'artifact text differs from the reply';
  if (partsText(last!.statusUpdate!.status!.message?.parts) !== REPLY) return 'final message differs from the reply';
  if (new Set(replyIds(events)).size !== replyIds(events).length) return 'a command reply twice';
  return undefined;
}

/**
 * The subscriber's stream against the turn's: the task as it stood, then the turn stream's
 * last events exactly. When they differ only in where command replies sit among the turn's
 * own events, that is said apart from a real loss, duplicate or reordering.
 */
function subscriberProblem(outcome: TurnOutcome): string | undefined {
  const sub = outcome.subscriber;
  if (!sub.parsed[0]?.task) return 'first event is not the task';
  const live = sub.json.slice(1);
  const turnEvents = outcome.turn.json.slice(1);
  if (live.length === 0) return 'no event after the task';
  const tail = turnEvents.slice(-live.length);
  if (live.length > turnEvents.length || live.some((json, i) => json !== tail[i])) {
    const sorted = (list: string[]) => [...list].sort().join('\n');
    const ownOf = (list: string[]) =>
      list.filter((json) => !/"TASK_STATE_WORKING"/.test(json) || !/"message"/.test(json));
    if (
      live.length <= turnEvents.length &&
      sorted(live) === sorted(tail) &&
      ownOf(live).join('\n') === ownOf(tail).join('\n')
    )
      return REPLY_PLACED_ELSEWHERE;
    const at = live.findIndex((json, i) => json !== tail[i]);
    return `differs from the turn stream's last ${live.length} events at ${at}: ${live[at]?.slice(0, 100)} vs ${tail[at]?.slice(0, 100)}`;
  }
  const snapshot = taskText(sub.parsed[0]);
  const liveText = artifactText(sub.parsed.slice(1));
  if (!REPLY.endsWith(liveText) || !REPLY.startsWith(snapshot) || snapshot.length + liveText.length < REPLY.length) {
    return `a gap: the task held ${snapshot.length} characters of the reply and ${liveText.length} followed, of ${REPLY.length}`;
  }
  if (!isFinal(sub.parsed[sub.parsed.length - 1])) return 'last event is not the final status';
  return undefined;
}

/** A "/status" sent during the load: whether it found the turn running (WORKING) or ended, and its reply. */
interface CommandSent {
  taskId: string;
  working: boolean;
  replyId: string;
}

/**
 * The stored task: waiting for input, the whole reply in its artifact, and as its status message
 * the turn's reply, or the reply of the last command answered after the turn; every command
 * reply in its history once.
 */
async function storedProblem(
  client: Client,
  outcome: TurnOutcome,
  commands: CommandSent[],
): Promise<string | undefined> {
  const task = await client.getTask({ tenant: '', id: outcome.taskId!, historyLength: undefined });
  if (task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED)
    return `stored status ${TaskState[task.status?.state ?? 0]}`;
  const after = commands.filter((c) => !c.working).at(-1);
  const status = task.status?.message;
  if (after ? status?.messageId !== after.replyId : textOf(status) !== REPLY)
    return "stored status message is neither the reply nor a later command's";
  if (!task.history.some((m) => textOf(m) === REPLY)) return 'the reply is not in the stored history';
  const stored = task.artifacts
    .map((a) => a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(''))
    .join('');
  if (stored !== REPLY) return `stored artifact differs (${stored.length} characters)`;
  const history = task.history.map((m) => m.messageId);
  for (const id of commands.map((c) => c.replyId)) {
    const count = history.filter((h) => h === id).length;
    if (count !== 1) return `a command reply ${count} times in the stored history`;
  }
  return undefined;
}

/** Every command answered WORKING has its reply in the turn's stream, once (CMD-8). */
function missedReplies(outcome: TurnOutcome, commands: CommandSent[]): number {
  const seen = replyIds(outcome.turn.parsed);
  return commands.filter((c) => c.working && seen.filter((id) => id === c.replyId).length !== 1).length;
}

async function runTurn(index: number, instances: ServerProcess[], running: Map<string, number>): Promise<TurnOutcome> {
  const outcome: TurnOutcome = { index, turn: received(), subscriber: received(), late: false, duration: NaN };
  const home = instances[index % instances.length]!;
  const watcher = instances[(index + 1) % instances.length]!;
  let subscription: Promise<unknown> | undefined;
  const stopSubscriber = new AbortController();
  try {
    const result = await postSse(`${home.url}/a2a/jsonrpc`, streamingRequest('Say something.'), {
      headers: A2A_HEADERS,
      keep: false,
      idleTimeoutMs: IDLE_TIMEOUT_MS,
      onEvent: (event) => {
        const r = keep(outcome.turn, event.data);
        if (!r.task || outcome.taskId) return;
        outcome.taskId = r.task.id;
        running.set(r.task.id, index);
        subscription = postSse(
          `${watcher.url}/a2a/jsonrpc`,
          { jsonrpc: '2.0', id: randomUUID(), method: 'SubscribeToTask', params: { id: r.task.id } },
          {
            headers: A2A_HEADERS,
            keep: false,
            idleTimeoutMs: SUBSCRIBER_IDLE_MS,
            signal: stopSubscriber.signal,
            onEvent: (sub) => {
              const first = outcome.subscriber.parsed.length === 0;
              const s = keep(outcome.subscriber, sub.data);
              // Subscribed after the end (a new task waits for input only once its turn ended):
              // the finished task, then nothing until a next message.
              if (first && finishedTask(s)) {
                outcome.late = true;
                stopSubscriber.abort();
              }
            },
          },
        ).catch((error: Error) => {
          if (stopSubscriber.signal.aborted) return;
          outcome.subscriberError = /no data for/.test(error.message)
            ? `silent for ${SUBSCRIBER_IDLE_MS / 1000} s without its final status`
            : error.message;
        });
      },
    });
    outcome.duration = result.end - result.start;
  } catch (error) {
    outcome.turnError = (error as Error).message;
  } finally {
    if (outcome.taskId) running.delete(outcome.taskId);
  }
  // It ends with the turn's final status, or fails once silent for SUBSCRIBER_IDLE_MS.
  await subscription;
  return outcome;
}

interface SideFigures {
  name: string;
  instances: number;
  turnsRight: number;
  subscribersRight: number;
  followed: number;
  storedRight: number;
  late: number;
  commandErrors: number;
  /** Subscribers whose events differ from their turn's only in where command replies sit. */
  repliesPlacedElsewhere: number;
}

/** The load on `instances` (turn i on i mod n, its subscriber on i+1, commands to i+2), then every check. */
async function runSide(name: string, instances: ServerProcess[], model: ServerProcess): Promise<SideFigures> {
  const n = instances.length;
  const clients = await Promise.all(instances.map((instance) => sdkClient(instance.url)));
  // Warm-up: a few turns followed from another instance, so modules are loaded and code optimised.
  await Promise.all(Array.from({ length: 3 * n }, (_, i) => runTurn(i, instances, new Map())));
  await model.reset();

  const running = new Map<string, number>();
  let finished = 0;
  const startedAt = performance.now();
  const turns = Array.from({ length: TURNS }, async (_, i) => {
    await sleep((RAMP_MS * i) / TURNS);
    try {
      return await runTurn(i, instances, running);
    } finally {
      finished++;
    }
  });
  const commandTimes: number[] = [];
  const sent: CommandSent[] = [];
  let commandErrors = 0;
  const commander = (async () => {
    for (let i = 0; i < COMMANDS && finished < TURNS; i++) {
      const open = [...running];
      if (open.length > 0) {
        const [taskId, index] = open[Math.floor(Math.random() * open.length)]!;
        const start = performance.now();
        try {
          const answer = await sendText(clients[(index + 2) % n]!, '/status', { id: taskId, contextId: '' });
          if (!isTask(answer) || !textOf(answer.status?.message).includes('\nState: '))
            throw new Error('unexpected /status answer');
          commandTimes.push(performance.now() - start);
          sent.push({
            taskId,
            working: answer.status?.state === TaskState.TASK_STATE_WORKING,
            replyId: answer.status!.message!.messageId,
          });
        } catch {
          commandErrors++;
        }
      }
      await sleep(10);
    }
  })();
  const outcomes = await Promise.all(turns);
  const wallMs = performance.now() - startedAt;
  await commander;

  const problems = new Map<string, number>();
  // Problems told apart by kind, not by their figures.
  const count = (what: string) =>
    problems.set(what.replace(/\d+/g, 'N'), (problems.get(what.replace(/\d+/g, 'N')) ?? 0) + 1);
  const figures: SideFigures = {
    name,
    instances: n,
    turnsRight: 0,
    subscribersRight: 0,
    followed: 0,
    storedRight: 0,
    late: 0,
    commandErrors,
    repliesPlacedElsewhere: 0,
  };
  let repliesInTurns = 0;
  let repliesMissed = 0;
  let eventsFollowed = 0;
  for (const outcome of outcomes) {
    const mine = sent.filter((c) => c.taskId === outcome.taskId);
    const missed = missedReplies(outcome, mine);
    repliesMissed += missed;
    const turnIssue =
      outcome.turnError ??
      turnProblem(outcome.turn.parsed) ??
      (missed ? 'a command reply answered WORKING missing or twice (CMD-8)' : undefined);
    if (turnIssue) count(`turn stream: ${turnIssue}`);
    else figures.turnsRight++;
    repliesInTurns += replyIds(outcome.turn.parsed).length;
    if (outcome.late) figures.late++;
    else {
      const subIssue = outcome.subscriberError ?? subscriberProblem(outcome);
      if (subIssue === REPLY_PLACED_ELSEWHERE) figures.repliesPlacedElsewhere++;
      if (subIssue) count(`subscriber: ${subIssue}`);
      else {
        figures.subscribersRight++;
        eventsFollowed += outcome.subscriber.json.length - 1;
      }
    }
    const storeIssue = outcome.taskId
      ? await storedProblem(clients[(outcome.index + 2) % n]!, outcome, mine).catch((error: Error) => error.message)
      : 'no task';
    if (storeIssue) count(`stored task: ${storeIssue}`);
    else figures.storedRight++;
  }
  figures.followed = TURNS - figures.late;
  const durations = summarize(outcomes.filter((o) => !o.turnError).map((o) => o.duration));
  const events = outcomes.reduce((sum, o) => sum + o.turn.json.length + o.subscriber.json.length, 0);
  const elsewhere = n > 1 ? 'another instance' : 'the same instance';
  console.log(
    `${name}: load done in ${(wallMs / 1000).toFixed(1)} s, ${events} events received (turn streams and subscribers), ${(events / (wallMs / 1000)).toFixed(0)} events/s`,
  );
  console.log(`  turn streams complete and in order: ${figures.turnsRight} of ${TURNS}`);
  console.log(
    `  subscribers on ${elsewhere} that received the rest of their turn exactly (the same events in the same order, each once, no gap after the task they were sent, the final status last): ` +
      `${figures.subscribersRight} of ${figures.followed} (${eventsFollowed} events)`,
  );
  console.log(`  subscriptions that arrived after their turn had ended (closed, not counted): ${figures.late}`);
  console.log(
    `  stored tasks with the whole reply, the final status and each command reply once: ${figures.storedRight} of ${TURNS}`,
  );
  const working = sent.filter((c) => c.working).length;
  console.log(
    `  "/status" on ${n > 1 ? 'a third instance' : 'the instance'} during the load: ${commandTimes.length} answered (${working} WORKING, the turn still running; ${sent.length - working} after it ended), ${commandErrors} failed; ` +
      `${repliesInTurns} replies seen in their turn's stream, ${repliesMissed} answered WORKING and not seen there once`,
  );
  for (const [problem, times] of problems) console.log(`    ${times} x ${problem}`);
  console.log(latencyLine(`one turn, request to end (ideal ${(TOKENS * DELAY) / 1000} s)`, durations, '', 44));
  console.log(latencyLine('"/status" during the load', summarize(commandTimes), '', 44));
  console.log(
    `  load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  return figures;
}

async function main(): Promise<void> {
  const schema = await benchSchema('cross-instance-scale');
  const started: ServerProcess[] = [];
  const results: SideFigures[] = [];
  try {
    header(
      `Events across instances under load: ${TURNS} concurrent streamed turns over ${INSTANCES} instances, each followed from another`,
      [
        `command: node --import tsx bench/cross-instance-scale.ts --turns ${TURNS} --tokens ${TOKENS} --delay ${DELAY} --commands ${COMMANDS} --ramp-ms ${RAMP_MS} --instances ${INSTANCES}${flags['no-baseline'] ? ' --no-baseline' : ''}`,
        `${schema.version} at ${schema.where} (schema ${schema.schema}, dropped at the end), on this machine; ${INSTANCES} harness processes on it and the fixture model in child processes, the clients here.`,
        `each turn: SendStreamingMessage (new task) on instance i mod ${INSTANCES} -> fixture model streaming ${TOKENS} tokens ${DELAY} ms apart; SubscribeToTask on instance i+1 as soon as the task is named; ` +
          `"/status" (SDK client) to instance i+2 on a random running task, one at a time 10 ms apart; the ${TURNS} turns opened within ${RAMP_MS} ms, evenly spread. ` +
          `Baseline after it: the same on one instance on SQLite (turn, subscriber and commands on it).`,
      ],
    );
    const model = await startServer({ kind: 'model', reply: REPLY, chunkDelayMs: DELAY }, { name: 'model' });
    started.push(model);
    const config = {
      defaultModel: 'fixture:small',
      detectOllama: false,
      admission: ADMIT_ALL,
      // Every turn is let in, the baseline's single instance too: what is measured is how they are carried.
      maxTurnsInFlight: Math.max(TURNS, 1),
      providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
    };
    const instances = await Promise.all(
      Array.from({ length: INSTANCES }, (_, i) =>
        startServer(
          { kind: 'harness', dataDir: tempDir(`cross-scale-${i}`), databaseUrl: schema.url, config },
          { name: `harness-${i}` },
        ),
      ),
    );
    started.push(...instances);
    results.push(await runSide(`${INSTANCES} instances on PostgreSQL`, instances, model));
    for (const instance of instances) await instance.close();
    await model.reset();
    if (!flags['no-baseline']) {
      const alone = await startServer(
        { kind: 'harness', dataDir: tempDir('cross-scale-sqlite'), config },
        { name: 'harness-sqlite' },
      );
      started.push(alone);
      results.push(await runSide('baseline: one instance on SQLite', [alone], model));
    }
  } finally {
    for (const server of started.reverse()) await server.close();
    await schema.drop();
  }
  for (const f of results) {
    const across = f.instances > 1;
    const line =
      `${f.name}, ${TURNS} turns: ${f.turnsRight} turn streams, ${f.subscribersRight} of ${f.followed} subscribers${across ? ' on another instance' : ''} and ${f.storedRight} stored tasks right` +
      (f.repliesPlacedElsewhere
        ? ` (${f.repliesPlacedElsewhere} subscribers saw a command reply at another place among the turn's events than the turn's stream)`
        : '');
    // A reply's place among the turn's own events may differ between two streams: each stream
    // sends the events in the order they reached its instance (the turn's own at once, a reply
    // once stored), and either order leaves the same task. Every event still arrives once.
    const pass =
      f.turnsRight === TURNS &&
      f.subscribersRight + f.repliesPlacedElsewhere === f.followed &&
      f.storedRight === TURNS &&
      f.commandErrors === 0;
    if (across) verdict(pass, `${line} (goal: every event delivered across instances, in order, once)`);
    else console.log(`  ${line}`);
  }
  printVerdicts('cross-instance-scale');
}

await main();
