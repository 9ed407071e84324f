/**
 * Issue 22, item 2: `serve --data-dir` at a place where no folder can be made (under /proc,
 * where mkdir answers ENOENT below an existing folder) ends start-up with one line naming the
 * folder and --data-dir. Node's recursive mkdir retried there forever, a core busy for good.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
/** How long the child may take before the test gives up on it: a safeguard, not a measure. */
const GIVE_UP_MS = 45_000;

describe(
  'serve --data-dir where no folder can be made',
  { skip: process.platform !== 'linux' && 'procfs is Linux only' },
  () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', CLI, 'serve', '--port', '0', '--grpc-port', '0', '--data-dir', '/proc/nonexistent/x'],
      { env: { ...process.env, TINY_HARNESS_DATABASE_URL: '' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });

    it('exits with code 1 and one line naming the folder and --data-dir', async () => {
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        new Promise<number | null>((resolve) => child.once('close', resolve)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`serve had not exited after ${GIVE_UP_MS} ms: ${stderr}`)),
            GIVE_UP_MS,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      assert.equal(code, 1, stderr);
      assert.equal(
        stderr.trim(),
        'tiny-harness: Cannot use the data folder /proc/nonexistent/x: no folder can be created there. Choose another folder with --data-dir.',
      );
    });
  },
);
