/**
 * Push notifications (issue 24): what one push config adds to a streamed turn's server CPU, and
 * how many deliveries per second one instance makes to a fast receiver.
 *
 *   node --import tsx bench/push.ts [--rounds 60] [--burst 50]
 *
 * The harness runs in a child process (SQLite, `push.allowPrivateNetworks` on for the receiver
 * on 127.0.0.1) with a fixture model streaming 200 one-word tokens with no delay. The receiver
 * is an HTTP server in this process answering 204 at once. CPU: rounds alternate a streamed turn
 * on a new task without a config and one whose `SendStreamingMessage` carries a config; the
 * harness's CPU is measured from the request until the stream ended and, with the config, until
 * the receiver has every event of the turn (the deliveries' CPU counted in). Goal: at most +10%.
 * Rate: a burst of turns at once, each with its config; deliveries per second from the first
 * POST to the last.
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { tempDir } from './lib/cleanup.js';
import { A2A_HEADERS, postSse, streamingRequest } from './lib/clients.js';
import { cpuMs, startServer, ADMIT_ALL } from './lib/processes.js';
import { header, num, printVerdicts, sleep, verdict } from './lib/report.js';
import { numberedReply } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: { rounds: { type: 'string', default: '60' }, burst: { type: 'string', default: '50' } },
});
const ROUNDS = Number(flags.rounds);
const BURST = Number(flags.burst);
const WARM_UP = 5;
const TOKENS = 200;
/** Issue 24's goal: one config adds at most 10% to a streamed turn's server CPU. */
const CPU_GOAL = 1.1;

/** What the receiver and the stream read of an event. */
interface PushedEvent {
  id?: string;
  taskId?: string;
  status?: { state?: string };
}

/** The receiver: POSTs by task, each event's generation, and when they came. */
const byTask = new Map<string, number>();
const finals = new Map<string, () => void>();
const finished = new Set<string>();
let posts = 0;
let firstPostAt = 0;
let lastPostAt = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = performance.now();
    if (posts++ === 0) firstPostAt = now;
    lastPostAt = now;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, PushedEvent>;
    const [kind, event] = Object.entries(body)[0]!;
    const taskId = (kind === 'task' ? event.id : event.taskId) ?? '';
    byTask.set(taskId, (byTask.get(taskId) ?? 0) + 1);
    const state = kind === 'statusUpdate' ? String(event.status?.state) : '';
    if (state && !/WORKING|SUBMITTED/.test(state)) {
      finished.add(taskId);
      finals.get(taskId)?.();
    }
    res.writeHead(204).end();
  });
});
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

header('push notifications: CPU of a streamed turn with one config, deliveries per second', [
  `${ROUNDS} rounds after ${WARM_UP} warm-up; a burst of ${BURST} turns; ${TOKENS} tokens per reply, no delay`,
]);

const reply = numberedReply(TOKENS);
const model = await startServer({ kind: 'model', reply, chunkDelayMs: 0 }, { name: 'model-push' });
const harness = await startServer(
  {
    kind: 'harness',
    dataDir: tempDir('push'),
    config: {
      defaultModel: 'fixture:small',
      detectOllama: false,
      admission: ADMIT_ALL,
      providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
      push: { allowPrivateNetworks: true },
    },
  },
  { name: 'harness-push' },
);

function request(withConfig: boolean): unknown {
  const body = streamingRequest('Say something.') as { params: { configuration: Record<string, unknown> } };
  if (withConfig) body.params.configuration = { taskPushNotificationConfig: { url: hookUrl, token: 'bench-token' } };
  return body;
}

/** One streamed turn; with a config, resolves once the receiver has the turn's final status. */
async function turn(withConfig: boolean): Promise<string> {
  let taskId = '';
  let delivered: Promise<void> | undefined;
  await postSse(`${harness.url}/a2a/jsonrpc`, request(withConfig), {
    headers: A2A_HEADERS,
    keep: false,
    onEvent: (event) => {
      if (taskId) return;
      const result = (JSON.parse(event.data) as { result?: Record<string, PushedEvent> }).result ?? {};
      taskId = result.task?.id ?? result.statusUpdate?.taskId ?? result.artifactUpdate?.taskId ?? '';
      if (withConfig && taskId)
        delivered = finished.has(taskId)
          ? Promise.resolve()
          : new Promise<void>((resolve) => finals.set(taskId, resolve));
    },
  });
  if (!taskId) throw new Error('the stream named no task');
  await delivered;
  return taskId;
}

try {
  for (let i = 0; i < WARM_UP; i++) {
    await turn(false);
    await turn(true);
  }
  let noneCpu = 0;
  let pushCpu = 0;
  let pushedEvents = 0;
  for (let i = 0; i < ROUNDS; i++) {
    let before = await harness.cpu();
    await turn(false);
    noneCpu += cpuMs(before, await harness.cpu());
    before = await harness.cpu();
    const taskId = await turn(true);
    pushCpu += cpuMs(before, await harness.cpu());
    pushedEvents += byTask.get(taskId) ?? 0;
    await model.reset();
  }
  const none = noneCpu / ROUNDS;
  const push = pushCpu / ROUNDS;
  console.log(`  server CPU per streamed turn: no config ${none.toFixed(2)} ms, one config ${push.toFixed(2)} ms`);
  const perTurn = pushedEvents / ROUNDS;
  const perDelivery = (push - none) / perTurn;
  console.log(
    `  events delivered per turn: ${perTurn.toFixed(1)}; server CPU per delivery ${perDelivery.toFixed(2)} ms (config, outbox rows, POST), about ${num(1000 / perDelivery)} deliveries per second per core`,
  );
  verdict(
    push <= none * CPU_GOAL,
    `one push config adds ${(((push - none) / none) * 100).toFixed(1)}% to a streamed turn's server CPU (goal: at most ${Math.round((CPU_GOAL - 1) * 100)}%)`,
  );

  // The burst: every turn at once, each with its config.
  posts = 0;
  const before = await harness.cpu();
  await Promise.all(Array.from({ length: BURST }, () => turn(true)));
  const cpu = cpuMs(before, await harness.cpu());
  const seconds = (lastPostAt - firstPostAt) / 1000;
  console.log(
    `  burst of ${BURST} turns: ${num(posts)} deliveries in ${seconds.toFixed(2)} s, ${num(posts / seconds)} deliveries/s; harness CPU ${cpu.toFixed(0)} ms for the turns and their deliveries`,
  );
  await sleep(0);
} finally {
  await harness.close();
  await model.close();
  receiver.close();
}
printVerdicts('push');
