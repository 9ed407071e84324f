/**
 * What one request of a valid size but a costly shape costs the server, and every other
 * client while it runs: the edge bounds of server/edge-schema.ts at work.
 *
 *   node --import tsx bench/edge-shapes.ts [--runs 3] [--only <words>]
 *
 * The harness runs in a child process on 127.0.0.1:0 with the built-in offline models. Each
 * shape is a JSON-RPC body under the 4 MiB limit (many parts, keys, list entries, deep
 * branches, long ids, a giant historyLength), sent `--runs` times, one at a time. Meanwhile a
 * second client sends `/help` commands back to back; the figure that matters is the slowest
 * of those while the shape was in flight (how long everyone else waited), next to the
 * shape's own round trip, the server's CPU time for it, and its answer. The baseline, in the
 * same run: a one-part message, and the `/help` round trip with nothing else in flight.
 *
 * The goal: no shape holds other clients up for a second or more.
 * A measurement, not a test: the process exits 0 whatever it finds.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { tempDir } from './lib/cleanup.js';
import { cpuMs, startServer, type ServerProcess, ADMIT_ALL } from './lib/processes.js';
import { header, ms, printVerdicts, summarize, verdict } from './lib/report.js';

const { values: flags } = parseArgs({ options: { runs: { type: 'string', default: '3' }, only: { type: 'string' } } });
const RUNS = Number(flags.runs);
const HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0' };
const N = 300_000;
const BIG = 'x'.repeat(3_900_000);

const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const message = (extra: Record<string, unknown> = {}) => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text: 'hello' }],
  ...extra,
});
const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1]));
const list = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const deep = (levels: number): unknown => JSON.parse('['.repeat(levels) + '1' + ']'.repeat(levels));

const SHAPES: Array<[string, () => string]> = [
  ['baseline: a one-part message', () => rpc('SendMessage', { message: message() })],
  ['one text part of 3.9 M characters', () => rpc('SendMessage', { message: message({ parts: [{ text: BIG }] }) })],
  [
    '340,000 empty text parts',
    () => rpc('SendMessage', { message: message({ parts: Array.from({ length: 340_000 }, () => ({ text: '' })) }) }),
  ],
  [
    '101 parts (the bound + 1)',
    () => rpc('SendMessage', { message: message({ parts: Array.from({ length: 101 }, () => ({ text: 'hi' })) }) }),
  ],
  ['300,000 message.metadata keys', () => rpc('SendMessage', { message: message({ metadata: keys(N) }) })],
  ['300,000 params.metadata keys', () => rpc('SendMessage', { message: message(), metadata: keys(N) })],
  [
    '300,000 keys in a data part',
    () => rpc('SendMessage', { message: message({ parts: [{ text: 'hi' }, { data: keys(N) }] }) }),
  ],
  ['9,000 metadata keys (under the bound)', () => rpc('SendMessage', { message: message({ metadata: keys(9_000) }) })],
  ['300,000 extensions', () => rpc('SendMessage', { message: message({ extensions: list(N, 'e') }) })],
  ['300,000 referenceTaskIds', () => rpc('SendMessage', { message: message({ referenceTaskIds: list(N, 'r') }) })],
  [
    '300,000 acceptedOutputModes',
    () => rpc('SendMessage', { message: message(), configuration: { acceptedOutputModes: list(N, 'm') } }),
  ],
  [
    '18,000 branches 95 deep in metadata',
    () => rpc('SendMessage', { message: message({ metadata: { d: Array.from({ length: 18_000 }, () => deep(95)) } }) }),
  ],
  [
    'metadata 10,000 deep',
    () =>
      rpc('SendMessage', { message: message({ metadata: { d: '[]' } }) }).replace(
        '"[]"',
        '['.repeat(10_000) + ']'.repeat(10_000),
      ),
  ],
  ['messageId of 3.9 M characters', () => rpc('SendMessage', { message: message({ messageId: BIG }) })],
  ['contextId of 3.9 M characters', () => rpc('SendMessage', { message: message({ contextId: BIG }) })],
  ['GetTask of an id of 3.9 M characters', () => rpc('GetTask', { id: BIG })],
  ['GetTask historyLength 1e300', () => rpc('GetTask', { id: randomUUID(), historyLength: 1e300 })],
];

async function post(url: string, body: string): Promise<{ ms: number; answer: string }> {
  const started = performance.now();
  const res = await fetch(`${url}/a2a/jsonrpc`, { method: 'POST', headers: HEADERS, body });
  const text = await res.text();
  const elapsed = performance.now() - started;
  let answer: string;
  try {
    const json = JSON.parse(text);
    answer = json.error ? `${json.error.code} ${String(json.error.message).slice(0, 70)}` : 'accepted';
  } catch {
    answer = `HTTP ${res.status}`;
  }
  return { ms: elapsed, answer };
}

/** Sends `body` once while `/help` probes run back to back; the slowest probe meanwhile. */
async function measure(
  server: ServerProcess,
  body: string,
): Promise<{ ms: number; cpu: number; worstProbe: number; answer: string }> {
  const probe = rpc('SendMessage', { message: message({ parts: [{ text: '/help' }] }) });
  const before = await server.cpu();
  let done = false;
  const request = post(server.url, body).finally(() => (done = true));
  let worstProbe = 0;
  while (!done) worstProbe = Math.max(worstProbe, (await post(server.url, probe)).ms);
  const result = await request;
  const after = await server.cpu();
  return { ms: result.ms, cpu: cpuMs(before, after), worstProbe, answer: result.answer };
}

header('Edge bounds: the cost of request shapes of a valid size', [
  `runs per shape: ${RUNS}; JSON-RPC; probes: /help, one at a time`,
]);
const server = await startServer(
  {
    kind: 'harness',
    dataDir: tempDir('tiny-harness-bench-edge-'),
    config: { detectOllama: false, admission: ADMIT_ALL },
  },
  { name: 'edge-harness' },
);
try {
  const idle = [];
  for (let i = 0; i < 20; i++)
    idle.push((await post(server.url, rpc('SendMessage', { message: message({ parts: [{ text: '/help' }] }) }))).ms);
  console.log(`  /help with nothing else in flight: median ${ms(summarize(idle).median)}\n`);
  console.log(
    `  ${'shape'.padEnd(40)} ${'MB'.padStart(5)} ${'round trip'.padStart(13)} ${'server CPU'.padStart(13)} ${'slowest /help'.padStart(14)}  answer`,
  );
  let worst = 0;
  for (const [name, build] of SHAPES) {
    if (flags.only && !name.includes(flags.only)) continue;
    const body = build();
    const runs: Array<Awaited<ReturnType<typeof measure>>> = [];
    for (let i = 0; i < RUNS; i++) runs.push(await measure(server, body));
    const median = (pick: (r: (typeof runs)[number]) => number) => summarize(runs.map(pick)).median;
    const probe = Math.max(...runs.map((r) => r.worstProbe));
    worst = Math.max(worst, probe);
    console.log(
      `  ${name.padEnd(40)} ${(body.length / 1e6).toFixed(2).padStart(5)} ${ms(
        median((r) => r.ms),
        0,
        10,
      )} ${ms(
        median((r) => r.cpu),
        0,
        10,
      )} ${ms(probe, 0, 11)}  ${runs[0]!.answer}`,
    );
  }
  console.log('');
  verdict(
    worst < 1000,
    `no shape held other clients up for a second or more (slowest /help meanwhile ${worst.toFixed(0)} ms)`,
  );
} finally {
  await server.close();
}
printVerdicts('edge-shapes');
