/**
 * Which HTTP server the edge should sit on (issue 36, "Choose the HTTP server by measurement"):
 * express 5 (today), Hono on `@hono/node-server`, or `node:http` alone, each serving the same
 * endpoints with the same work behind them (bench/lib/http-variants/work.ts):
 *
 * - JSON-RPC `GetTask`: parse the body, check it is a JSON-RPC 2.0 request, answer a fixed small
 *   task as JSON (stands for `/status`);
 * - JSON-RPC `SendStreamingMessage`: 20 SSE events with `id:` lines, one per turn of the event
 *   loop, then the end (stands for a streamed turn);
 * - the same two in the HTTP+JSON shape: `GET /tasks/{id}` and `POST /message:stream`.
 *
 *   node --import tsx bench/http-servers.ts [--rounds 3] [--requests 400] [--levels 1,16]
 *
 * Each server runs in a child process of its own (bench/lib/http-variant-child.ts), so its CPU
 * time (`process.cpuUsage`, user + system) is its own; the clients (`node:http` keep-alive
 * agents, one connection per client) run here. After a warm-up, every round measures every
 * endpoint at every level on the three servers one after the other (the order rotating from
 * round to round), `--requests` requests each; the figure is server CPU µs per request, its
 * median over the rounds and the spread (lowest to highest). Also printed: the lines of code
 * each variant needs for the A2A plumbing (routing, the body, JSON and SSE) and for the GET
 * routes (page, card, `/metrics`, `/healthz`, `/readyz`).
 * A measurement, not a test: the process exits 0 whatever it finds.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { track } from './lib/cleanup.js';
import { VARIANTS, type VariantName } from './lib/http-variants/variant.js';
import { JSONRPC_PATH, REST_PATH, TASK, TURN_EVENTS } from './lib/http-variants/work.js';
import { header, ROOT, summarize, versionOf } from './lib/report.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    requests: { type: 'string', default: '400' },
    levels: { type: 'string', default: '1,16' },
  },
});
const ROUNDS = Number(flags.rounds);
const REQUESTS = Number(flags.requests);
const LEVELS = flags.levels.split(',').map(Number);
const WARM_UP = 300;

interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** Whether the answer is the right one. */
  check(status: number, text: string): boolean;
}

const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 7, method, params });
const message = { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] };
const isTask = (status: number, text: string) => status === 200 && text.includes(`"id":"${TASK.id}"`);
const isTurn = (status: number, text: string) =>
  status === 200 && text.split('\n').filter((line) => line.startsWith('id: ')).length === TURN_EVENTS;

const ENDPOINTS: Array<[string, Call]> = [
  [
    'JSON-RPC GetTask (/status)',
    { method: 'POST', path: JSONRPC_PATH, body: rpc('GetTask', { id: TASK.id }), check: isTask },
  ],
  [
    'JSON-RPC stream (a turn)',
    { method: 'POST', path: JSONRPC_PATH, body: rpc('SendStreamingMessage', { message }), check: isTurn },
  ],
  ['HTTP+JSON GET /tasks/{id}', { method: 'GET', path: `${REST_PATH}/tasks/${TASK.id}`, check: isTask }],
  [
    'HTTP+JSON POST /message:stream',
    { method: 'POST', path: `${REST_PATH}/message:stream`, body: JSON.stringify({ message }), check: isTurn },
  ],
];

/** Answers every variant must give beyond the measured ones: the GET routes and the refusals. */
const SIDE_CHECKS: Array<[string, Call]> = [
  ['GET /', { method: 'GET', path: '/', check: (s, t) => s === 200 && t.startsWith('<!doctype html>') }],
  [
    'GET the card',
    { method: 'GET', path: '/.well-known/agent-card.json', check: (s, t) => s === 200 && t.includes('"skills"') },
  ],
  ['GET /metrics', { method: 'GET', path: '/metrics', check: (s, t) => s === 200 && t.includes('requests_total 1') }],
  ['GET /healthz', { method: 'GET', path: '/healthz', check: (s) => s === 200 }],
  ['GET /readyz', { method: 'GET', path: '/readyz', check: (s) => s === 200 }],
  ['GET /nowhere', { method: 'GET', path: '/nowhere', check: (s) => s === 404 }],
  [
    'a body that does not parse',
    { method: 'POST', path: JSONRPC_PATH, body: '{"jsonrpc":', check: (s, t) => s === 200 && t.includes('-32700') },
  ],
  [
    'not JSON-RPC 2.0',
    { method: 'POST', path: JSONRPC_PATH, body: '{"id":1}', check: (s, t) => s === 200 && t.includes('-32600') },
  ],
];

interface Child {
  name: VariantName;
  url: string;
  cpu(): Promise<number>;
  close(): Promise<void>;
}

async function startChild(name: VariantName): Promise<Child> {
  const child: ChildProcess = track(
    fork(join(ROOT, 'bench/lib/http-variant-child.ts'), [name], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const next = (type: string) =>
    new Promise<{ url?: string; cpu?: NodeJS.CpuUsage }>((resolve, reject) => {
      const onMessage = (message: { type: string; url?: string; cpu?: NodeJS.CpuUsage }) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message);
      };
      const onExit = () => reject(new Error(`the ${name} server exited`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const { url } = await next('ready');
  return {
    name,
    url: url!,
    async cpu() {
      const answer = next('cpu');
      child.send({ type: 'cpu' });
      const { cpu } = await answer;
      return cpu!.user + cpu!.system;
    },
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'close' });
      await exited;
    },
  };
}

function send(agent: Agent, url: string, call: Call): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { Accept: 'application/json, text/event-stream' };
    if (call.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(call.body);
    }
    const req = request(`${url}${call.path}`, { method: call.method, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(call.body);
  });
}

/** `count` requests from `clients` clients, one at a time each; server CPU µs per request and requests per second. */
async function drive(child: Child, call: Call, clients: number, count: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  let sent = 0;
  const before = await child.cpu();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (sent < count) {
        sent++;
        const { status, text } = await send(agent, child.url, call);
        if (!call.check(status, text))
          throw new Error(`${child.name}: a wrong answer (${status}): ${text.slice(0, 200)}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = (await child.cpu()) - before;
  agent.destroy();
  return { cpuPerRequest: cpu / count, perSecond: count / seconds };
}

/** Code lines (not blank, not only a comment) of a variant's file, in all and in its `#region`s. */
function linesOf(name: VariantName): Record<string, number> {
  const lines = readFileSync(join(ROOT, `bench/lib/http-variants/${name}.ts`), 'utf8').split('\n');
  const counts: Record<string, number> = { file: 0 };
  let region: string | undefined;
  for (const line of lines) {
    const trimmed = line.trim();
    const opens = /^\/\/ #region (\S+)/.exec(trimmed);
    if (opens) region = opens[1];
    else if (trimmed === '// #endregion') region = undefined;
    if (!trimmed || trimmed.startsWith('//') || trimmed.startsWith('/*') || trimmed.startsWith('*')) continue;
    counts.file!++;
    if (region) counts[region] = (counts[region] ?? 0) + 1;
  }
  return counts;
}

const fixed = (value: number, digits = 0) => value.toFixed(digits);

header('HTTP servers for the edge: express 5, Hono on @hono/node-server, node:http', [
  `command: node --import tsx bench/http-servers.ts --rounds ${ROUNDS} --requests ${REQUESTS} --levels ${LEVELS.join(',')}`,
  `express ${versionOf('express')}, hono ${versionOf('hono')}, @hono/node-server ${versionOf('@hono/node-server')}; ` +
    `${WARM_UP} warm-up requests per endpoint and server, then ${ROUNDS} rounds of ${REQUESTS} requests per endpoint, level and server`,
]);

const children: Child[] = [];
for (const name of VARIANTS) children.push(await startChild(name));
try {
  const warmUp = new Agent({ keepAlive: true, maxSockets: 4 });
  for (const child of children) {
    for (const [label, call] of SIDE_CHECKS) {
      const { status, text } = await send(warmUp, child.url, call);
      if (!call.check(status, text)) throw new Error(`${child.name}: ${label}: a wrong answer (${status}): ${text}`);
    }
    for (const [, call] of ENDPOINTS) await drive(child, call, 4, WARM_UP);
  }
  warmUp.destroy();
  console.log(`  every server gives the same answers (${SIDE_CHECKS.map(([label]) => label).join(', ')})`);

  const figures = new Map<string, { cpu: number[]; perSecond: number[] }>();
  const key = (endpoint: string, level: number, name: string) => `${endpoint}|${level}|${name}`;
  for (let round = 0; round < ROUNDS; round++) {
    const order = children.map((_, i) => children[(i + round) % children.length]!);
    for (const [endpoint, call] of ENDPOINTS)
      for (const level of LEVELS)
        for (const child of order) {
          const result = await drive(child, call, level, REQUESTS);
          const entry = figures.get(key(endpoint, level, child.name)) ?? { cpu: [], perSecond: [] };
          entry.cpu.push(result.cpuPerRequest);
          entry.perSecond.push(result.perSecond);
          figures.set(key(endpoint, level, child.name), entry);
        }
  }

  console.log(
    `\n  server CPU µs per request: median of ${ROUNDS} rounds (lowest-highest), x the cheapest; requests/s (wall, a loaded machine)`,
  );
  for (const [endpoint] of ENDPOINTS)
    for (const level of LEVELS) {
      console.log(`  ${endpoint}, ${level} client${level === 1 ? '' : 's'}`);
      const rows = VARIANTS.map((name) => {
        const entry = figures.get(key(endpoint, level, name))!;
        const cpu = summarize(entry.cpu);
        return { name, cpu, perSecond: summarize(entry.perSecond).median };
      });
      const cheapest = Math.min(...rows.map((row) => row.cpu.median));
      for (const row of rows)
        console.log(
          `    ${row.name.padEnd(10)} ${fixed(row.cpu.median).padStart(6)} µs (${fixed(row.cpu.min)}-${fixed(row.cpu.max)})  x${(row.cpu.median / cheapest).toFixed(2)}   ${fixed(row.perSecond).padStart(6)} req/s`,
        );
    }

  console.log('\n  lines of code (not blank, not comments) in bench/lib/http-variants/<server>.ts');
  console.log(
    `    ${'server'.padEnd(10)} ${'A2A plumbing'.padStart(13)} ${'GET routes'.padStart(11)} ${'whole file'.padStart(11)}`,
  );
  for (const name of VARIANTS) {
    const counts = linesOf(name);
    console.log(
      `    ${name.padEnd(10)} ${String(counts.a2a ?? 0).padStart(13)} ${String(counts['get-routes'] ?? 0).padStart(11)} ${String(counts.file).padStart(11)}`,
    );
  }
  console.log(
    `\n  load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  for (const child of children) await child.close();
}
