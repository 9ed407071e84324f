/**
 * Whether response time tells another user's task from a task that does not exist. Both are
 * "not found" to the caller; if one path is faster (an image found in memory and refused,
 * against a database read that finds nothing), timing alone tells a user which ids exist.
 *
 *   node --import tsx bench/task-scope-timing.ts [--calls 1500] [--warm-up 200] [--tasks 20]
 *
 * Two measurements, each alternating the two kinds of id call by call so that drift of the
 * machine hits both alike:
 * - over the wire: a harness child with bearer tokens for alice and bob; alice makes `--tasks`
 *   tasks (one `/status` each, then reads them, so they are in memory); bob sends `GetTask`
 *   over JSON-RPC for one of alice's ids, then for a random UUID, `--calls` times each;
 * - in the store: `SqlTaskStore.load` as bob, in this process, on alice's (cached) tasks and on
 *   random ids, ten times as many calls.
 * The random ids are as many as alice's and made before the clock starts, and both kinds are
 * asked in the same cycle, so both touch the same amount of memory. For scale, the difference between the medians of
 * the odd and the even calls of one kind is printed as well: what noise alone gives.
 * Goal: the medians of the two kinds differ by no more than noise: twice the odd/even
 * difference, or 3% of a call over the wire (some 20 µs here, against 155 µs before the store
 * read by scope), 2 µs in the store; and the two answers are the same error.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Role, TaskState } from '@a2a-js/sdk';
import { ServerCallContext, type User } from '@a2a-js/sdk/server';
import { openStore } from '../src/store/index.js';
import { removeDir, tempDir } from './lib/cleanup.js';
import { A2A_HEADERS, keepAlive } from './lib/clients.js';
import { startServer, ADMIT_ALL } from './lib/processes.js';
import { header, printVerdicts, summarize, verdict, type Summary } from './lib/report.js';
import { message } from './lib/seed.js';

const { values: flags } = parseArgs({
  options: {
    calls: { type: 'string', default: '1500' },
    'warm-up': { type: 'string', default: '200' },
    tasks: { type: 'string', default: '20' },
  },
});
const CALLS = Number(flags.calls);
const WARM_UP = Number(flags['warm-up']);
const TASKS = Number(flags.tasks);
/** Over the wire: a share of the call's median that counts as noise on this shared machine. */
const WIRE_NOISE_SHARE = 0.03;
const STORE_NOISE_US = 2;

const TOKENS = { 'alice-token-0123456789abcdef': 'alice', 'bob-token-0123456789abcdef00': 'bob' };

/** One JSON-RPC call over a keep-alive connection; the parsed answer. */
function rpc(
  url: string,
  token: string,
  method: string,
  params: unknown,
): Promise<{ result?: { task?: { id: string } }; error?: { code: number; message: string } }> {
  const payload = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const target = new URL(`${url}/a2a/jsonrpc`);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: keepAlive,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          authorization: `Bearer ${token}`,
          ...A2A_HEADERS,
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve(JSON.parse(body)));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** Calls `probe(kind)` for both kinds in turn; the timings of each kind after the warm-up, in µs. */
async function alternate(
  calls: number,
  probe: (kind: 'foreign' | 'random', i: number) => Promise<void>,
): Promise<{ foreign: Summary; random: Summary; noise: number }> {
  const foreign: number[] = [];
  const random: number[] = [];
  for (let i = 0; i < WARM_UP + calls; i++) {
    // Which kind goes first alternates too, so neither always follows the other.
    for (const kind of i % 2 === 0 ? (['foreign', 'random'] as const) : (['random', 'foreign'] as const)) {
      const start = performance.now();
      await probe(kind, i);
      const micros = (performance.now() - start) * 1000;
      if (i >= WARM_UP) (kind === 'foreign' ? foreign : random).push(micros);
    }
  }
  const halves = (values: number[]) =>
    Math.abs(
      summarize(values.filter((_, i) => i % 2 === 0)).median - summarize(values.filter((_, i) => i % 2 === 1)).median,
    );
  return { foreign: summarize(foreign), random: summarize(random), noise: Math.max(halves(foreign), halves(random)) };
}

function line(label: string, s: Summary): string {
  return `  ${label.padEnd(34)} median ${s.median.toFixed(1).padStart(8)} µs   p90 ${s.p90.toFixed(1).padStart(8)} µs   (n=${s.n})`;
}

async function overTheWire(): Promise<void> {
  console.log("over the wire: bob sends GetTask (JSON-RPC) for alice's task ids and for random ids");
  const dataDir = tempDir('scope-timing');
  const server = await startServer(
    {
      kind: 'harness',
      dataDir,
      config: { detectOllama: false, admission: ADMIT_ALL },
      tokens: Object.fromEntries(Object.entries(TOKENS)),
    },
    { name: 'harness' },
  );
  const [aliceToken, bobToken] = Object.keys(TOKENS) as [string, string];
  try {
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const sent = await rpc(server.url, aliceToken, 'SendMessage', {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: '/status' }] },
      });
      const id = sent.result?.task?.id;
      if (!id) throw new Error(`SendMessage answered no task: ${sent.error?.message ?? 'no result'}`);
      ids.push(id);
    }
    for (const id of ids) await rpc(server.url, aliceToken, 'GetTask', { id });
    const answers = new Map<string, string>();
    const randomIds = Array.from({ length: ids.length }, () => randomUUID());
    const { foreign, random, noise } = await alternate(CALLS, async (kind, i) => {
      const id = kind === 'foreign' ? ids[i % ids.length]! : randomIds[i % ids.length]!;
      const answer = await rpc(server.url, bobToken, 'GetTask', { id });
      answers.set(kind, `${answer.error?.code} ${answer.error?.message.replace(id, '<id>')}`);
    });
    console.log(line("alice's task id (exists)", foreign));
    console.log(line('random id (does not exist)', random));
    const difference = foreign.median - random.median;
    console.log(
      `  difference of the medians: ${difference.toFixed(1)} µs (odd vs even calls of one kind: up to ${noise.toFixed(1)} µs); answers: ${[...answers].map(([k, v]) => `${k} "${v}"`).join(', ')}`,
    );
    verdict(
      answers.get('foreign') === answers.get('random'),
      `over the wire, the same answer for both kinds of id ("${answers.get('random')}")`,
    );
    const allowed = Math.max(WIRE_NOISE_SHARE * random.median, 2 * noise);
    verdict(
      Math.abs(difference) <= allowed,
      `over the wire, medians ${foreign.median.toFixed(1)} vs ${random.median.toFixed(1)} µs differ by ${difference.toFixed(1)} µs (goal: within noise, here ${allowed.toFixed(1)} µs)`,
    );
  } finally {
    await server.close();
    removeDir(dataDir);
  }
}

class Named implements User {
  constructor(readonly userName: string) {}
  get isAuthenticated(): boolean {
    return true;
  }
}

async function inTheStore(): Promise<void> {
  console.log("\nin the store: SqlTaskStore.load as bob, on alice's cached tasks and on random ids (same process)");
  const dataDir = tempDir('scope-timing-store');
  const store = await openStore({ dataDir });
  try {
    const alice = new ServerCallContext({ user: new Named('alice') });
    const bob = new ServerCallContext({ user: new Named('bob') });
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const id = randomUUID();
      const contextId = randomUUID();
      const history = [message(id, contextId, Role.ROLE_USER, 'hello'), message(id, contextId, Role.ROLE_AGENT, 'hi')];
      await store.tasks.create(
        {
          id,
          contextId,
          status: {
            state: TaskState.TASK_STATE_INPUT_REQUIRED,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          artifacts: [],
          history,
          metadata: {},
        },
        alice,
      );
      await store.tasks.load(id, alice);
      ids.push(id);
    }
    const randomIds = Array.from({ length: ids.length }, () => randomUUID());
    const { foreign, random, noise } = await alternate(CALLS * 10, async (kind, i) => {
      const found = await store.tasks.load(kind === 'foreign' ? ids[i % ids.length]! : randomIds[i % ids.length]!, bob);
      if (found) throw new Error('bob read a task of alice');
    });
    console.log(line("alice's task id (exists)", foreign));
    console.log(line('random id (does not exist)', random));
    const difference = foreign.median - random.median;
    console.log(
      `  difference of the medians: ${difference.toFixed(1)} µs (odd vs even calls of one kind: up to ${noise.toFixed(1)} µs)`,
    );
    verdict(
      Math.abs(difference) <= STORE_NOISE_US,
      `in the store, medians ${foreign.median.toFixed(1)} vs ${random.median.toFixed(1)} µs differ by ${difference.toFixed(1)} µs (goal: at most ${STORE_NOISE_US} µs)`,
    );
  } finally {
    await store.close();
    removeDir(dataDir);
  }
}

header("Timing of another user's task against a task that does not exist", [
  `command: node --import tsx bench/task-scope-timing.ts --calls ${CALLS} --warm-up ${WARM_UP} --tasks ${TASKS}`,
  `${CALLS} calls of each kind over the wire (after ${WARM_UP} of each to warm up), ${CALLS * 10} in the store; kinds alternate call by call.`,
]);
await overTheWire();
await inTheStore();
printVerdicts('task-scope-timing');
process.exit(0);
