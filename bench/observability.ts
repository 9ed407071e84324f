/**
 * What observability costs the server: CPU per streamed turn and per `/status` command with
 * everything off (no OTEL_ variable: nothing of the SDK loaded, the API's no-op spans; metrics
 * off), with metrics on and scraped every second, with tracing on (the Node SDK exporting
 * OTLP/HTTP JSON to a receiver in this process, every span sampled), and with both. The goal
 * (issue 26): at most 5% more CPU with everything on. A scrape's own CPU counts: it is the
 * server's.
 *
 *   node --import tsx bench/observability.ts [--turns N] [--before <checkout>] [--protocol http/json|http/protobuf]
 *     [--sampler <OTEL_TRACES_SAMPLER>]   (always_off: the SDK loaded, no span recorded)
 *
 * `--before`: a checkout of the code before tracing (`git archive <commit> | tar -x -C dir`,
 * with node_modules linked), whose harness is measured too, tracing off: the baseline.
 * Each harness runs in a child process (bench/lib/server-child.ts) against the fixture model
 * (100-token replies, no delay); turns alternate between the harnesses so that the machine's
 * drift falls on each alike. A measurement, not a test: it exits 0 whatever the numbers.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { tempDir } from './lib/cleanup.js';
import { postSse, streamingRequest, A2A_HEADERS, parseStreamEvent } from './lib/clients.js';
import { cpuMs, startServer, type ServerProcess } from './lib/processes.js';
import { header, summarize } from './lib/report.js';

const { values: flags } = parseArgs({
  options: {
    turns: { type: 'string', default: '300' },
    before: { type: 'string' },
    protocol: { type: 'string', default: 'http/json' },
    sampler: { type: 'string', default: 'parentbased_always_on' },
  },
});
const TURNS = Number(flags.turns);
const WARM_UP = 30;

/** An OTLP/HTTP receiver that counts what it is sent. */
async function startReceiver() {
  let posts = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      posts += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts: () => ({ posts, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One streamed turn on a new task; resolves with its task and context ids once the final status arrived. */
async function turn(url: string, text = 'Say something.'): Promise<{ taskId: string; contextId: string }> {
  let ids: { taskId: string; contextId: string } | undefined;
  await postSse(`${url}/a2a/jsonrpc`, streamingRequest(text), {
    headers: A2A_HEADERS,
    keep: false,
    onEvent: (event) => {
      const status = parseStreamEvent(event.data).statusUpdate as { taskId?: string; contextId?: string } | undefined;
      if (status?.taskId && status.contextId) ids = { taskId: status.taskId, contextId: status.contextId };
    },
  });
  if (!ids) throw new Error('the turn streamed no status');
  return ids;
}

async function status(url: string, target: { taskId: string; contextId: string }): Promise<void> {
  const response = await fetch(`${url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...A2A_HEADERS },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: {
        message: {
          messageId: crypto.randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text: '/status' }],
          taskId: target.taskId,
          contextId: target.contextId,
        },
      },
    }),
  });
  if (!response.ok) throw new Error(`/status answered HTTP ${response.status}`);
  await response.text();
}

/** CPU milliseconds the server spends on `work`. */
async function cpuOf(server: ServerProcess, work: () => Promise<unknown>): Promise<number> {
  const before = await server.cpu();
  await work();
  return cpuMs(before, await server.cpu());
}

const receiver = await startReceiver();
const model = await startServer({ kind: 'model', reply: Array(100).fill('word').join(' ') }, { name: 'model' });
const config = {
  defaultModel: 'fixture:small',
  detectOllama: false,
  providers: { fixture: { type: 'openai-compatible', baseURL: model.url, models: ['small'] } },
};
const harness = (name: string, metrics: boolean | undefined, options: Parameters<typeof startServer>[1] = {}) =>
  startServer(
    {
      kind: 'harness',
      dataDir: tempDir(`observability-${name}`),
      config: { ...config, metrics: { enabled: metrics } },
    },
    { name, ...options },
  );
const tracing = {
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: flags.protocol,
  OTEL_SERVICE_NAME: 'tiny-harness-bench',
  OTEL_TRACES_SAMPLER: flags.sampler,
};
const runs: { label: string; server: ServerProcess; scraped?: boolean; turn: number[]; status: number[] }[] = [];
if (flags.before)
  runs.push({
    label: 'before',
    server: await harness('before', undefined, { root: flags.before }),
    turn: [],
    status: [],
  });
runs.push({ label: 'everything off', server: await harness('off', false), turn: [], status: [] });
runs.push({
  label: 'metrics, scraped 1/s',
  server: await harness('metrics', true),
  scraped: true,
  turn: [],
  status: [],
});
runs.push({
  label: `tracing (${flags.protocol}, ${flags.sampler})`,
  server: await harness('tracing', false, { env: tracing }),
  turn: [],
  status: [],
});
runs.push({
  label: 'everything on',
  server: await harness('all', true, { env: tracing }),
  scraped: true,
  turn: [],
  status: [],
});
// Every second, as a Prometheus server would: each scrape read whole.
let scrapes = 0;
const scraper = setInterval(() => {
  for (const run of runs.filter((r) => r.scraped))
    void fetch(`${run.server.url}/metrics`).then(async (response) => {
      if (!response.ok) throw new Error(`/metrics answered HTTP ${response.status}`);
      await response.text();
      scrapes += 1;
    });
}, 1000);
try {
  const tasks = new Map<ServerProcess, { taskId: string; contextId: string }>();
  for (const run of runs) tasks.set(run.server, await turn(run.server.url));
  for (let i = 0; i < WARM_UP; i++)
    for (const run of runs) {
      await turn(run.server.url);
      await status(run.server.url, tasks.get(run.server)!);
    }
  for (let i = 0; i < TURNS; i++) {
    for (const run of runs) {
      run.turn.push(await cpuOf(run.server, () => turn(run.server.url)));
      run.status.push(await cpuOf(run.server, () => status(run.server.url, tasks.get(run.server)!)));
    }
    if (i % 50 === 49) await model.reset();
  }
  header('Observability: server CPU per operation (median, p90), ms', [
    `${TURNS} streamed turns of 100 tokens and ${TURNS} /status commands per harness, alternating`,
  ]);
  const base = runs.find((run) => run.label === 'everything off')!;
  for (const run of runs) {
    const t = summarize(run.turn);
    const s = summarize(run.status);
    const vs = (a: number, b: number) =>
      run === base ? '' : ` (${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(0)}%)`;
    console.log(
      `  ${run.label.padEnd(30)} turn ${t.median.toFixed(2)} / ${t.p90.toFixed(2)}${vs(t.median, summarize(base.turn).median)}` +
        `   /status ${s.median.toFixed(2)} / ${s.p90.toFixed(2)}${vs(s.median, summarize(base.status).median)}`,
    );
  }
  const { posts, bytes } = receiver.counts();
  console.log(`  the receiver got ${posts} OTLP posts, ${(bytes / 1024).toFixed(0)} KiB (before the last flush)`);
  console.log(`  ${scrapes} scrapes of /metrics`);
  const off = runs.find((run) => run.label === 'everything off')!;
  const all = runs.find((run) => run.label === 'everything on')!;
  const added = (on: number[], base: number[]) => (summarize(on).median / summarize(base).median - 1) * 100;
  const turnAdded = added(all.turn, off.turn);
  const statusAdded = added(all.status, off.status);
  const verdict = turnAdded <= 5 && statusAdded <= 5 ? 'PASS' : 'FAIL';
  console.log(
    `  goal: everything on adds at most 5% CPU: turn ${turnAdded.toFixed(1)}%, /status ${statusAdded.toFixed(1)}%: ${verdict}`,
  );
} finally {
  clearInterval(scraper);
  for (const run of runs) await run.server.close();
  await model.close();
  await receiver.close();
}
