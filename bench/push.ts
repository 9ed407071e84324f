/**
 * Push notifications (issues 24 and 33): what one push config adds to a streamed turn's server
 * CPU, per delivery, against a bare `node:http` POST of the same body to the same receiver, and
 * how many deliveries per second one instance makes to a fast receiver.
 *
 *   node --import tsx bench/push.ts [--rounds 60] [--burst 50] [--before <checkout>]
 *
 * The harness runs in a child process (SQLite, `push.allowPrivateNetworks` on for the receiver
 * on 127.0.0.1) with a fixture model streaming 200 one-word tokens with no delay. The receiver
 * is an HTTP server in this process answering 204 at once. CPU: rounds alternate a streamed turn
 * on a new task without a config and one whose `SendStreamingMessage` carries a config; the
 * harness's CPU is measured from the request until the stream ended and, with the config, until
 * the receiver has every event of the turn (the deliveries' CPU counted in). Goal: at most +10%.
 * Rate: a burst of turns at once, each with its config; deliveries per second from the first
 * POST to the last. Baseline (issue 33's goal: at most x2): a child process POSTing the body of
 * a delivery of this run 2,000 times, one after the other, with a keep-alive `node:http` agent
 * (bench/lib/bare-post.ts), its CPU per POST. `--before`: a checkout of earlier code
 * (`git archive <commit> | tar -x -C dir`, node_modules linked), measured in the same rounds,
 * turn for turn alternating with this one.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { promisify } from 'node:util';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { tempDir } from './lib/cleanup.js';
import { A2A_HEADERS, postSse, streamingRequest } from './lib/clients.js';
import { cpuMs, startServer, type ServerProcess, ADMIT_ALL } from './lib/processes.js';
import { header, num, printVerdicts, ROOT, sleep, verdict } from './lib/report.js';
import { numberedReply } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '60' },
    burst: { type: 'string', default: '50' },
    before: { type: 'string' },
  },
});
const ROUNDS = Number(flags.rounds);
const BURST = Number(flags.burst);
const WARM_UP = 5;
const TOKENS = 200;
/** Issue 24's goal: one config adds at most 10% to a streamed turn's server CPU. */
const CPU_GOAL = 1.1;
/** Issue 33's goal: a delivery's server CPU at most x2 a bare `node:http` POST of its body. */
const BARE_GOAL = 2;
const BARE_POSTS = 2000;

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
/** A delivered artifact update's body, for the bare POST to send. */
let sampleBody = '';
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = performance.now();
    if (posts++ === 0) firstPostAt = now;
    lastPostAt = now;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, PushedEvent>;
    const [kind, event] = Object.entries(body)[0]!;
    if (kind === 'artifactUpdate') sampleBody = Buffer.concat(chunks).toString('utf8');
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
function startHarness(label: string, root?: string): Promise<ServerProcess> {
  return startServer(
    {
      kind: 'harness',
      dataDir: tempDir(`push-${label}`),
      config: {
        defaultModel: 'fixture:small',
        detectOllama: false,
        admission: ADMIT_ALL,
        providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
        push: { allowPrivateNetworks: true },
      },
    },
    { name: `harness-push-${label}`, root },
  );
}
const harnesses: Array<{ label: string; server: ServerProcess }> = [];
if (flags.before) harnesses.push({ label: 'before', server: await startHarness('before', flags.before) });
harnesses.push({ label: 'now', server: await startHarness('now') });

/** CPU ms of one bare `node:http` POST of `body` to the receiver, in a process of its own. */
async function barePostCpuMs(body: string): Promise<number> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'bench/lib/bare-post.ts', hookUrl, String(BARE_POSTS), body],
    { cwd: ROOT },
  );
  const { cpuMs: used, count } = JSON.parse(stdout) as { cpuMs: number; count: number };
  return used / count;
}

function request(withConfig: boolean): unknown {
  const body = streamingRequest('Say something.') as { params: { configuration: Record<string, unknown> } };
  if (withConfig) body.params.configuration = { taskPushNotificationConfig: { url: hookUrl, token: 'bench-token' } };
  return body;
}

/** One streamed turn; with a config, resolves once the receiver has the turn's final status. */
async function turn(harness: ServerProcess, withConfig: boolean): Promise<string> {
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
  for (let i = 0; i < WARM_UP; i++)
    for (const { server } of harnesses) {
      await turn(server, false);
      await turn(server, true);
    }
  const totals = harnesses.map(() => ({ none: 0, push: 0, events: 0 }));
  for (let i = 0; i < ROUNDS; i++) {
    for (const [h, { server }] of harnesses.entries()) {
      let before = await server.cpu();
      await turn(server, false);
      totals[h]!.none += cpuMs(before, await server.cpu());
      before = await server.cpu();
      const taskId = await turn(server, true);
      totals[h]!.push += cpuMs(before, await server.cpu());
      totals[h]!.events += byTask.get(taskId) ?? 0;
    }
    await model.reset();
  }
  const bare = await barePostCpuMs(sampleBody);
  console.log(
    `  a bare node:http POST of a delivery's body (${sampleBody.length} bytes), keep-alive, in its own process: ${bare.toFixed(3)} ms of CPU`,
  );
  for (const [h, { label }] of harnesses.entries()) {
    const none = totals[h]!.none / ROUNDS;
    const push = totals[h]!.push / ROUNDS;
    const perTurn = totals[h]!.events / ROUNDS;
    const perDelivery = (push - none) / perTurn;
    console.log(
      `  ${label}: server CPU per streamed turn: no config ${none.toFixed(2)} ms, one config ${push.toFixed(2)} ms; ${perTurn.toFixed(1)} events delivered per turn; server CPU per delivery ${perDelivery.toFixed(3)} ms (config, outbox rows, POST), x${(perDelivery / bare).toFixed(2)} the bare POST, about ${num(1000 / perDelivery)} deliveries per second per core`,
    );
    verdict(
      push <= none * CPU_GOAL,
      `${label}: one push config adds ${(((push - none) / none) * 100).toFixed(1)}% to a streamed turn's server CPU (goal: at most ${Math.round((CPU_GOAL - 1) * 100)}%)`,
    );
    verdict(
      perDelivery <= bare * BARE_GOAL,
      `${label}: a delivery's server CPU is x${(perDelivery / bare).toFixed(2)} a bare node:http POST (goal: at most x${BARE_GOAL})`,
    );
  }

  // The burst: every turn at once, each with its config, on each harness in turn.
  for (const { label, server } of harnesses) {
    posts = 0;
    const before = await server.cpu();
    await Promise.all(Array.from({ length: BURST }, () => turn(server, true)));
    const cpu = cpuMs(before, await server.cpu());
    const seconds = (lastPostAt - firstPostAt) / 1000;
    console.log(
      `  ${label}: burst of ${BURST} turns: ${num(posts)} deliveries in ${seconds.toFixed(2)} s, ${num(posts / seconds)} deliveries/s; harness CPU ${cpu.toFixed(0)} ms for the turns and their deliveries`,
    );
  }
  await sleep(0);
} finally {
  await Promise.all(harnesses.map(({ server }) => server.close()));
  await model.close();
  receiver.close();
}
printVerdicts('push');
