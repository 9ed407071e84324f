/**
 * What the tests start outside their own process. The command line runs as shipped: the
 * bundle in dist/bundle (scripts/run-tests.mjs rebuilds it from the current sources first),
 * which starts in a fraction of the time the sources take under tsx. Each child runs in a
 * process group of its own, and when it exits whatever is left of its group is killed, so
 * nothing it started outlives it. A test stops what it starts in `after`; for a file that is
 * cancelled or interrupted, scripts/run-tests.mjs kills whatever carries the run's id
 * (TINY_HARNESS_TEST_RUN, inherited by every child) and the tmux servers on the run's sockets.
 */
import { spawn, type ChildProcessByStdio, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI_BUNDLE = join(ROOT, 'dist', 'bundle', 'cli.mjs');

/** The run's id: the last of the ids the runners around this process gave (`solo` outside a runner). */
const RUN_ID = process.env['TINY_HARNESS_TEST_RUN']?.split(',').at(-1) ?? 'solo';

/** The prefix of the run's tmux sockets; scripts/run-tests.mjs removes the sockets that carry it. */
export const TMUX_SOCKET_PREFIX = `tiny-harness-test-${RUN_ID}-`;

/** The prefix of the run's PostgreSQL schemas; scripts/run-tests.mjs drops those left behind. */
export const SCHEMA_PREFIX = `th_test_${RUN_ID}`;

/** How node runs the command line: `[...cliProgram(), 'serve', ...]`. */
export function cliProgram(): string[] {
  if (!existsSync(CLI_BUNDLE)) {
    throw new Error(`${CLI_BUNDLE} is missing: run the tests with npm test, which builds it, or run npm run build`);
  }
  return [CLI_BUNDLE];
}

/**
 * Spawns `command`, its output piped, as the leader of a process group; when it exits, the rest
 * of its group is killed.
 */
export function spawnGroup(
  command: string,
  args: string[],
  options: Pick<SpawnOptions, 'cwd' | 'env'>,
): ChildProcessByStdio<null, Readable, Readable> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const pid = child.pid;
  if (pid !== undefined) child.once('exit', () => killGroup(pid));
  return child;
}

/** Sends `signal` to every process of the group `pid` leads, if any is left. */
function killGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
