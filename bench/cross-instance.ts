/**
 * Several instances on one PostgreSQL database: how long a command's reply takes to reach a
 * stream open on another instance, and whether a turn's events reach subscribers on other
 * instances under load, every one, in order, once.
 *
 *   node --import tsx bench/cross-instance.ts [--commands 300] [--streams 150] [--tokens 50] [--delay 20]
 *
 * 1. Delay. Two harness processes (A, B) on one schema; a turn streams from A (a fixture model
 *    emitting a token every 100 ms, so the turn surely runs). Commands (`/help`) are sent one at
 *    a time with the SDK's JSON-RPC client, and each is timed from its send until its reply is
 *    seen in A's open stream (read with a raw SSE client). Sent to B: the cross-instance delay;
 *    sent to A: the baseline of the same path on one instance, interleaved with the first.
 *    Goal (the issue): at most 5 ms at the median on loopback.
 * 2. Events under load. Three instances; N streamed turns (the scale benchmark's fixture: a
 *    numbered reply, one token every `--delay` ms) started round-robin, and for each task a
 *    `SubscribeToTask` on the next instance, opened at the task's first event. Checked: the
 *    subscriber's events are the tail of the turn's own stream, in the same order, none missing
 *    and none twice, ending with the same final status; and the stored task has the whole reply.
 *    Goal: every one, in order, once.
 * PostgreSQL from TINY_HARNESS_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test),
 * a schema of its own, dropped at the end; without a server the benchmark says SKIPPED.
 */
import { performance } from 'node:perf_hooks';
import { TaskState } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { tempDir } from './lib/cleanup.js';
import { A2A_HEADERS, parseStreamEvent, partsText, postSse, sdkClient, sendText, streamingRequest, type StreamResult } from './lib/clients.js';
import { benchSchema, type BenchSchema } from './lib/postgres.js';
import { startServer, type ServerProcess } from './lib/processes.js';
import { header, latencyLine, printVerdicts, sleep, summarize, verdict } from './lib/report.js';
import { numberedReply } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    commands: { type: 'string', default: '300' },
    streams: { type: 'string', default: '150' },
    tokens: { type: 'string', default: '50' },
    delay: { type: 'string', default: '20' },
  },
});
const COMMANDS = Number(flags.commands);
const STREAMS = Number(flags.streams);
const TOKENS = Number(flags.tokens);
const DELAY = Number(flags.delay);

function harnessConfig(modelUrl: string) {
  return { defaultModel: 'fixture:small', detectOllama: false, providers: { fixture: { type: 'openai-compatible', baseURL: modelUrl, models: ['small'] } } };
}

async function instances(count: number, schema: BenchSchema, modelUrl: string, name: string): Promise<ServerProcess[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      startServer({ kind: 'harness', dataDir: tempDir(`${name}-${i}`), databaseUrl: schema.url, config: harnessConfig(modelUrl) }, { name: `${name}-${i}` }),
    ),
  );
}

/** Part 1: the delay of a reply from B into A's stream, against A into its own. */
async function delay(schema: BenchSchema): Promise<boolean> {
  const model = await startServer({ kind: 'model', reply: numberedReply(5000), chunkDelayMs: 100 }, { name: 'model-delay' });
  const [a, b] = await instances(2, schema, model.url, 'delay');
  try {
    let taskId = '';
    let contextId = '';
    let onReply: ((at: number) => void) | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const turn = postSse(`${a!.url}/a2a/jsonrpc`, streamingRequest('Write at length.'), {
      headers: A2A_HEADERS,
      keep: false,
      onEvent: (event) => {
        const r = parseStreamEvent(event.data);
        if (r.task) {
          taskId = r.task.id;
          contextId = r.task.contextId;
        }
        if (r.artifactUpdate) started();
        if ((r.statusUpdate?.status?.message as { metadata?: Record<string, unknown> } | undefined)?.metadata?.['command']) onReply?.(event.at);
      },
    });
    await running;
    const [toA, toB] = [await sdkClient(a!.url), await sdkClient(b!.url)];
    const times = { a: [] as number[], b: [] as number[] };
    for (let i = 0; i < COMMANDS + 40; i++) {
      const which = i % 2 === 0 ? 'b' : 'a';
      const seen = new Promise<number>((resolve) => (onReply = resolve));
      const sent = performance.now();
      const answer = await sendText(which === 'a' ? toA : toB, '/help', { id: taskId, contextId });
      const at = await seen;
      onReply = undefined;
      if (!('status' in answer) || answer.status?.state !== TaskState.TASK_STATE_WORKING) throw new Error('the command during the turn was not answered WORKING');
      if (i >= 40) times[which].push(at - sent);
    }
    await toA.cancelTask({ tenant: '', id: taskId, metadata: {} });
    await turn;
    const same = summarize(times.a);
    const across = summarize(times.b);
    console.log(`Delay: /help sent during a turn streaming from A, until its reply is seen in A's stream (${times.a.length} + ${times.b.length}, interleaved)`);
    console.log(latencyLine('sent to A (one instance)', same));
    console.log(latencyLine('sent to B (across instances)', across));
    console.log(`  across - same: +${(across.median - same.median).toFixed(2)} ms at the median`);
    return verdict(across.median <= 5, `cross-instance delay at most 5 ms at the median: ${across.median.toFixed(2)} ms (one instance ${same.median.toFixed(2)} ms)`);
  } finally {
    await Promise.all([a!.close(), b!.close(), model.close()]);
  }
}

/** Part 2: every event of turns on one instance reaches subscribers on another, in order, once. */
async function underLoad(schema: BenchSchema): Promise<boolean> {
  const reply = numberedReply(TOKENS);
  const model = await startServer({ kind: 'model', reply, chunkDelayMs: DELAY }, { name: 'model-load' });
  const servers = await instances(3, schema, model.url, 'load');
  try {
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: STREAMS }, async (_, i) => {
        await sleep((1000 * i) / STREAMS);
        const home = servers[i % 3]!;
        const other = servers[(i + 1) % 3]!;
        const own: string[] = [];
        let subscription: Promise<string[]> | undefined;
        const turn = await postSse(`${home.url}/a2a/jsonrpc`, streamingRequest('Say something.'), {
          headers: A2A_HEADERS,
          keep: false,
          idleTimeoutMs: 60_000,
          onEvent: (event) => {
            const r = parseStreamEvent(event.data);
            own.push(describe(r));
            if (r.task && !subscription) subscription = subscribe(other, r.task.id);
          },
        });
        if (turn.status !== 200) throw new Error(`stream ${i}: HTTP ${turn.status}`);
        const seen = await subscription!;
        return { own, seen };
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    let events = 0;
    let broken = 0;
    let firstProblem = '';
    for (const { own, seen } of results) {
      // The subscriber's first event is the task as stored when it subscribed; what follows must
      // be exactly the turn's own events after some point, in order, each once, to the end.
      const tail = seen.slice(1);
      events += tail.length;
      const at = own.length - tail.length;
      const ok = tail.length > 0 && at >= 1 && tail.every((event, k) => event === own[at + k]) && new Set(tail).size === tail.length;
      if (!ok) {
        broken++;
        firstProblem ||= `own ${own.length} events ending ${own.slice(-2).join(' | ')}; seen ${seen.length} ending ${seen.slice(-2).join(' | ')}`;
      }
    }
    console.log(`Events under load: ${STREAMS} streamed turns round-robin on 3 instances (a token every ${DELAY} ms, ${TOKENS} tokens), each followed by SubscribeToTask on the next instance, ${seconds.toFixed(1)} s`);
    console.log(`  ${events} events seen by subscribers on another instance; ${STREAMS - broken} of ${STREAMS} subscriptions exactly the tail of their turn's stream${firstProblem ? `; first problem: ${firstProblem}` : ''}`);
    return verdict(broken === 0, `events across instances under load: every one, in order, once (${STREAMS - broken} of ${STREAMS} subscriptions, ${events} events)`);
  } finally {
    await Promise.all([...servers.map((server) => server.close()), model.close()]);
  }
}

/** SubscribeToTask on `server`: each event as a comparable line. */
async function subscribe(server: ServerProcess, taskId: string): Promise<string[]> {
  const seen: string[] = [];
  const body = { jsonrpc: '2.0', id: randomUUID(), method: 'SubscribeToTask', params: { id: taskId } };
  await postSse(`${server.url}/a2a/jsonrpc`, body, { headers: A2A_HEADERS, keep: false, idleTimeoutMs: 60_000, onEvent: (event) => seen.push(describe(parseStreamEvent(event.data))) });
  return seen;
}

/** An event as a line that names what it carries (the task's own first event is left as "task"). */
function describe(r: StreamResult): string {
  if (r.task) return 'task';
  if (r.artifactUpdate) return `artifact ${r.artifactUpdate.artifact.artifactId} ${r.artifactUpdate.append ? '+' : '='}${partsText(r.artifactUpdate.artifact.parts)}${r.artifactUpdate.lastChunk ? ' (last)' : ''}`;
  if (r.statusUpdate) return `status ${r.statusUpdate.status?.state} ${partsText(r.statusUpdate.status?.message?.parts).slice(0, 40)}`;
  return 'other';
}

header('Several instances on one PostgreSQL database: reply delay across instances, events under load');
const schema = await benchSchema();
if (!schema) {
  console.log('  SKIPPED: needs PostgreSQL (set TINY_HARNESS_BENCH_DATABASE_URL)');
  process.exit(0);
}
try {
  await delay(schema);
  await underLoad(schema);
} finally {
  await schema.drop();
}
printVerdicts('cross-instance');
process.exit(0);
