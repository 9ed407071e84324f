// Runs every test file under test/ with Node's own test runner, TypeScript loaded by tsx.
// Node 20's runner does not expand globs, so the files are listed here. First it rebuilds the
// command line's bundle if a source is newer (the tests run dist/bundle/cli.mjs). Afterwards,
// and when it is interrupted, it kills whatever the run started and left running: every child
// inherits TINY_HARNESS_TEST_RUN, the run's tmux sockets and PostgreSQL schemas carry its id
// (test/support/processes.ts), and each thing it had to kill or drop is named on a line.
import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout } from 'node:timers/promises';
import { availableParallelism, constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BUNDLE_INPUTS, staleness } from './freshness.mjs';

const filter = process.argv.slice(2);
const files = readdirSync('test', { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)))
  .sort()
  .map((f) => join('test', f));

if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

bundleIfStale();

const runId = randomBytes(4).toString('hex');
// A run inside a run (test/needs.test.ts) adds its id: the outer run still finds what it started.
const marker = [process.env.TINY_HARNESS_TEST_RUN, runId].filter(Boolean).join(',');
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    // Node 20 applies this to each file as a whole and kills the file when it fires, skipping its
    // `after` hooks. Each wait in the tests has its own bound and fails with a clear message;
    // this only keeps a hang that nothing bounds from holding CI forever, so it is ten times the
    // old 60 s that a slow file on a busy machine could exceed with every test passing.
    '--test-timeout=600000',
    // As many files at once as there are cores (Node's default is one fewer): the files mostly
    // wait on servers and streamed replies, and on 2 cores two at a time took 80-90 s where one at
    // a time took 133-147 s for the same five command-line files.
    `--test-concurrency=${availableParallelism()}`,
    // The usual report, then (at the end) a line for each test skipped and why.
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${fileURLToPath(new URL('./skip-summary.mjs', import.meta.url))}`,
    '--test-reporter-destination=stdout',
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, TINY_HARNESS_TEST_RUN: marker } },
);

let interrupted;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted ??= signal;
    child.kill(signal);
  });
}
const [code] = await once(child, 'exit');
await cleanUp();
process.exit(interrupted ? 128 + constants.signals[interrupted] : (code ?? 1));

/** Runs scripts/bundle-cli.mjs unless dist/bundle/cli.mjs is newer than everything it is built from. */
function bundleIfStale() {
  if (staleness('.', ['dist/bundle/cli.mjs'], BUNDLE_INPUTS) === undefined) return;
  const result = spawnSync(process.execPath, ['scripts/bundle-cli.mjs'], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(1);
}

/** Kills the run's tmux servers and processes, drops its schemas, and names each. */
async function cleanUp() {
  const socketDir = join(process.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid()}`);
  const sockets = readdirOr(socketDir).filter((name) => name.startsWith(`tiny-harness-test-${runId}-`));
  for (const name of sockets) {
    const killed = spawnSync('tmux', ['-S', join(socketDir, name), 'kill-server'], { stdio: 'ignore' });
    if (killed.status === 0) console.log(`test run ${runId} left a tmux server running, killed it: socket ${name}`);
  }
  // A process may start another between a scan and the kill: scan again until nothing new is left.
  const killed = new Set();
  for (let pass = 0; pass < 5; pass++) {
    const left = leftProcesses().filter(({ pid }) => !killed.has(pid));
    if (left.length === 0) break;
    for (const { pid, leader, command } of left) {
      console.log(`test run ${runId} left a process running, killed it: ${pid} ${command}`);
      killed.add(pid);
      kill(leader ? -pid : pid);
    }
    await setTimeout(100);
  }
  for (const name of sockets) {
    try {
      unlinkSync(join(socketDir, name));
    } catch {
      // the server removed it as it exited
    }
  }
  await dropSchemas();
}

/** The processes whose environment carries this run's id; `leader` if it leads a group of its own. */
function leftProcesses() {
  const ownGroup = processGroup(process.pid);
  const left = [];
  for (const entry of readdirOr('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environment = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const ids =
        environment
          .find((v) => v.startsWith('TINY_HARNESS_TEST_RUN='))
          ?.slice(22)
          .split(',') ?? [];
      if (!ids.includes(runId)) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 160);
      const group = processGroup(pid);
      left.push({ pid, leader: group === pid && group !== ownGroup, command });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return left;
}

/** The process group of `pid`, from /proc/<pid>/stat (the fields after the command's closing parenthesis). */
function processGroup(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

function kill(pid) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function readdirOr(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Drops the schemas named after this run (test/support/postgres.ts) that a cancelled file left. */
async function dropSchemas() {
  const url = process.env.TINY_HARNESS_TEST_DATABASE_URL;
  if (!url) return;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [
      `th\\_test\\_${runId}\\_%`,
    ]);
    for (const { nspname } of rows) {
      await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
      console.log(`test run ${runId} left a PostgreSQL schema, dropped it: ${nspname}`);
    }
  } catch (error) {
    console.log(`test run ${runId}: could not look for schemas left behind: ${error.message}`);
  } finally {
    await client.end().catch(() => {});
  }
}
