/**
 * The harness's CPU per `/status`, on SQLite and on PostgreSQL, and the bare SDK's per fixed
 * message, measured block by block on every server in turn, so that a busy machine's drift
 * hits all alike; optionally the same harnesses from another checkout (the code before a
 * change) in the same blocks. Issue 36's two CPU goals are ratios of these: PostgreSQL / SQLite
 * at most x1.5, SQLite / the bare SDK at most x2.5.
 *
 *   node --import tsx bench/status-cpu.ts [--before <checkout>] [--blocks 12] [--requests 200] [--clients 16]
 *
 * Each block sends `--requests` blocking `SendMessage` "/status" (the bare SDK: "hello") to each
 * server, `--clients` at a time, each client on its own task; a server's figure for the block is
 * its process's CPU (user + system) over the block, per request. Each ratio is taken block by
 * block between servers measured one right after the other, then its median and spread over the
 * blocks are printed: a ratio of neighbours moves less than either figure on a loaded machine.
 * `--before` names a checkout with its `node_modules` (`git archive <commit> | tar -x -C <dir>`,
 * the packages built): its harnesses run from its own `bench/lib/server-child.ts`.
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from '@a2a-js/sdk/client';
import { tempDir } from './lib/cleanup.js';
import { isTask, sdkClient, sendText, type Target } from './lib/clients.js';
import { benchSchema, type BenchSchema } from './lib/postgres.js';
import { ADMIT_ALL, cpuMs, startServer as startHere, type ServerProcess } from './lib/processes.js';
import { header, ROOT } from './lib/report.js';

const { values: flags } = parseArgs({
  options: {
    before: { type: 'string' },
    blocks: { type: 'string', default: '12' },
    requests: { type: 'string', default: '200' },
    clients: { type: 'string', default: '16' },
  },
});
const BLOCKS = Number(flags.blocks);
const REQUESTS = Number(flags.requests);
const CLIENTS = Number(flags.clients);

interface Measured {
  name: string;
  server: ServerProcess;
  clients: Client[];
  tasks: Array<Target | undefined>;
  text: string;
  perBlock: number[];
}

async function harnesses(label: string, root: string, schemas: BenchSchema[]): Promise<Measured[]> {
  const { startServer } = (await import(join(root, 'bench/lib/processes.ts'))) as { startServer: typeof startHere };
  const schema = await benchSchema('status-cpu');
  schemas.push(schema);
  const config = { detectOllama: false, admission: ADMIT_ALL };
  const sqlite = await startServer(
    { kind: 'harness', dataDir: tempDir('status-cpu'), config },
    { name: `${label}-sqlite` },
  );
  const postgres = await startServer(
    { kind: 'harness', dataDir: tempDir('status-cpu'), config, databaseUrl: schema.url },
    { name: `${label}-postgres` },
  );
  return Promise.all([
    measured(`${label} SQLite`, sqlite, '/status', true),
    measured(`${label} PostgreSQL`, postgres, '/status', true),
  ]);
}

async function measured(name: string, server: ServerProcess, text: string, ownTask: boolean): Promise<Measured> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => sdkClient(server.url)));
  const tasks: Array<Target | undefined> = [];
  for (const client of clients) {
    if (!ownTask) {
      tasks.push(undefined);
      continue;
    }
    const made = await sendText(client, text);
    if (!isTask(made)) throw new Error(`${name}: a command without a task should answer with a task`);
    tasks.push({ id: made.id, contextId: made.contextId });
  }
  return { name, server, clients, tasks, text, perBlock: [] };
}

/** `REQUESTS` requests to the server, `CLIENTS` at a time; its CPU per request. */
async function block(side: Measured): Promise<number> {
  let left = REQUESTS;
  const before = await side.server.cpu();
  await Promise.all(
    side.clients.map(async (client, i) => {
      while (left > 0) {
        left--;
        await sendText(client, side.text, side.tasks[i]);
      }
    }),
  );
  return cpuMs(before, await side.server.cpu()) / REQUESTS;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function spread(values: readonly number[], digits: number, prefix = ''): string {
  const f = (v: number) => `${prefix}${v.toFixed(digits)}`;
  return `${f(median(values))} (${f(Math.min(...values))} to ${f(Math.max(...values))})`;
}

async function main(): Promise<void> {
  header('CPU per /status: the harness on SQLite and PostgreSQL, the bare SDK, block by block', [
    `command: node --import tsx bench/status-cpu.ts${flags.before ? ` --before ${flags.before}` : ''} --blocks ${BLOCKS} --requests ${REQUESTS} --clients ${CLIENTS}`,
    `per block, each server in turn (the order rotating): ${REQUESTS} blocking SendMessage, ${CLIENTS} clients at a time, each on its own task; the server's CPU over the block per request.`,
  ]);
  const schemas: BenchSchema[] = [];
  const sides: Measured[] = [];
  try {
    const bare = await startHere({ kind: 'bare', options: { reply: 'message' } }, { name: 'bare-status-cpu' });
    sides.push(await measured('bare SDK fixed message', bare, 'hello', false));
    if (flags.before) sides.push(...(await harnesses('before', resolve(flags.before), schemas)));
    sides.push(...(await harnesses(flags.before ? 'after' : 'harness', ROOT, schemas)));
    // Warm-up: one block each, not counted.
    for (const side of sides) await block(side);
    for (let b = 0; b < BLOCKS; b++) {
      const order = sides.map((_, i) => sides[(i + b) % sides.length]!);
      for (const side of order) side.perBlock.push(await block(side));
      process.stdout.write(`  block ${b + 1} of ${BLOCKS} done\n`);
    }
    console.log('\nCPU per request, ms: median of the blocks (lowest to highest)');
    for (const side of sides) console.log(`  ${side.name.padEnd(24)} ${spread(side.perBlock, 3)}`);
    const ratio = (a: Measured, b: Measured) => a.perBlock.map((value, i) => value / b.perBlock[i]!);
    const byName = (name: string) => sides.find((side) => side.name === name)!;
    console.log('\nratios, block by block: median (lowest to highest)');
    for (const label of flags.before ? ['before', 'after'] : ['harness']) {
      const sqlite = byName(`${label} SQLite`);
      const postgres = byName(`${label} PostgreSQL`);
      console.log(`  ${label}: PostgreSQL / SQLite ${spread(ratio(postgres, sqlite), 2, 'x')} (goal x1.5)`);
      console.log(`  ${label}: SQLite / bare SDK ${spread(ratio(sqlite, sides[0]!), 2, 'x')} (goal x2.5)`);
      console.log(`  ${label}: PostgreSQL / bare SDK ${spread(ratio(postgres, sides[0]!), 2, 'x')}`);
    }
    if (flags.before)
      for (const backend of ['SQLite', 'PostgreSQL'])
        console.log(
          `  after / before, ${backend}: ${spread(ratio(byName(`after ${backend}`), byName(`before ${backend}`)), 2, 'x')}`,
        );
  } finally {
    await Promise.all(sides.map((side) => side.server.close()));
    for (const schema of schemas) await schema.drop();
  }
}

await main();
