/**
 * Push notifications to dead receivers (issue 33): the CPU an idle harness spends retrying
 * deliveries to webhooks that refuse every connection. One of the findings: 305 configs on a
 * dead receiver kept three idle instances at 12% CPU.
 *
 *   node --import tsx bench/push-idle.ts [--tasks 30] [--configs 10] [--seconds 60] [--before <checkout>]
 *
 * Each harness runs in a child process (SQLite, `push.allowPrivateNetworks` on, the default
 * retries), with `--tasks` tasks of `--configs` configs each, every config's webhook a port on
 * 127.0.0.1 where nothing listens (refused at once); each task then runs one streamed turn of the
 * fixture model, so every config owes the turn's events. From then on nothing is sent: the
 * harness's CPU over the next `--seconds`, in windows of 10 s, is what retrying costs it; as the
 * backoff makes attempts rarer with time, so is the CPU per failed attempt (from the metrics).
 * `--before`: a checkout of earlier code (`git archive <commit> | tar -x -C dir`, with
 * node_modules linked), set up and measured at the same time, the same way: the baseline.
 */
import { createServer } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { tempDir } from './lib/cleanup.js';
import { A2A_HEADERS, postSse, streamingRequest } from './lib/clients.js';
import { cpuMs, startServer, type ServerProcess } from './lib/processes.js';
import { header, sleep } from './lib/report.js';

const { values: flags } = parseArgs({
  options: {
    tasks: { type: 'string', default: '30' },
    configs: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '60' },
    before: { type: 'string' },
  },
});
const TASKS = Number(flags.tasks);
const CONFIGS = Number(flags.configs);
const SECONDS = Number(flags.seconds);
const WINDOW_S = 10;

/** A port nothing listens on: taken, then let go. */
async function deadPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

const deadUrl = `http://127.0.0.1:${await deadPort()}/hook`;

header('push notifications: idle CPU with configs on a dead receiver', [
  `${TASKS} tasks x ${CONFIGS} configs, each task one streamed turn, then ${SECONDS} s idle, measured in ${WINDOW_S} s windows`,
]);

const model = await startServer({ kind: 'model', reply: 'a short reply of a few words', chunkDelayMs: 0 });

async function harness(name: string, root?: string): Promise<ServerProcess> {
  return startServer(
    {
      kind: 'harness',
      dataDir: tempDir(`push-idle-${name}`),
      config: {
        defaultModel: 'fixture:small',
        detectOllama: false,
        providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
        push: { allowPrivateNetworks: true },
      },
    },
    { name: `harness-push-idle-${name}`, root },
  );
}

async function rpc(server: ServerProcess, method: string, params: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...A2A_HEADERS },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: Record<string, unknown>; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result ?? {};
}

/** Failed attempts so far (`tiny_harness_push_deliveries_total`); the scrape's CPU counts, alike for both. */
async function failedAttempts(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/tiny_harness_push_deliveries_total\{outcome="failed"\} (\d+)/.exec(text)?.[1] ?? 0);
}

/** The tasks, their configs, and one streamed turn on each. */
async function setUp(server: ServerProcess): Promise<void> {
  for (let t = 0; t < TASKS; t++) {
    const message = { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: '/status' }] };
    const task = (await rpc(server, 'SendMessage', { message })).task as { id: string };
    for (let c = 0; c < CONFIGS; c++)
      await rpc(server, 'CreateTaskPushNotificationConfig', { taskId: task.id, id: `c${c}`, url: deadUrl });
    const turn = streamingRequest('Say something.') as { params: { message: Record<string, unknown> } };
    turn.params.message.taskId = task.id;
    await postSse(`${server.url}/a2a/jsonrpc`, turn, { headers: A2A_HEADERS, keep: false });
  }
}

const servers: Array<{ label: string; server: ServerProcess }> = [{ label: 'now', server: await harness('now') }];
if (flags.before) servers.unshift({ label: 'before', server: await harness('before', flags.before) });

try {
  await Promise.all(servers.map(({ server }) => setUp(server)));
  const windows = new Map<string, number[]>(servers.map(({ label }) => [label, []]));
  const totals = new Map(servers.map(({ label }) => [label, { cpu: 0, attempts: 0 }]));
  const sample = () => Promise.all(servers.map(({ server }) => Promise.all([server.cpu(), failedAttempts(server)])));
  for (let elapsed = 0; elapsed < SECONDS; elapsed += WINDOW_S) {
    const before = await sample();
    await sleep(WINDOW_S * 1000);
    const after = await sample();
    servers.forEach(({ label }, i) => {
      const cpu = cpuMs(before[i]![0], after[i]![0]);
      windows.get(label)!.push(cpu / (WINDOW_S * 10));
      const total = totals.get(label)!;
      total.cpu += cpu;
      total.attempts += after[i]![1] - before[i]![1];
    });
  }
  for (const { label } of servers) {
    const percents = windows.get(label)!.map((p) => `${p.toFixed(2)}%`);
    const { cpu, attempts } = totals.get(label)!;
    console.log(
      `  ${label.padEnd(6)} idle CPU per ${WINDOW_S} s window: ${percents.join(' ')}; mean ${(cpu / (SECONDS * 10)).toFixed(2)}% of a core; ${attempts} failed attempts, ${(cpu / Math.max(1, attempts)).toFixed(2)} ms of CPU each`,
    );
  }
} finally {
  await Promise.all(servers.map(({ server }) => server.close()));
  await model.close();
}
