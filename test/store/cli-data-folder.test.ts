/**
 * Issue 22, item 2: `serve --data-dir` (or `--commands-dir`) at a place where no folder can be
 * made (under /proc, where mkdir answers ENOENT below an existing folder) ends start-up with one
 * line naming the folder and the flag. Node's recursive mkdir retried there forever, a core busy
 * for good.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliProgram, spawnGroup } from '../support/processes.js';

/** How long the child may take before the test gives up on it: a safeguard, not a measure. */
const GIVE_UP_MS = 120_000;

/** Runs `serve` with `flags`; resolves with its exit code and standard error once it exits. */
async function serveExit(flags: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawnGroup(process.execPath, [...cliProgram(), 'serve', '--port', '0', '--grpc-port', '0', ...flags], {
    env: { ...process.env, TINY_HARNESS_DATABASE_URL: '' },
  });
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    new Promise<number | null>((resolve) => child.once('close', resolve)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`serve had not exited after ${GIVE_UP_MS} ms: ${stderr}`)), GIVE_UP_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  return { code, stderr: stderr.trim() };
}

describe('serve where no folder can be made', { skip: process.platform !== 'linux' && 'procfs is Linux only' }, () => {
  it('--data-dir: exits with code 1 and one line naming the folder and --data-dir', async () => {
    const { code, stderr } = await serveExit(['--data-dir', '/proc/nonexistent/x']);
    assert.equal(code, 1, stderr);
    assert.equal(
      stderr,
      'tiny-harness: Cannot use the data folder /proc/nonexistent/x: no folder can be created there. Choose another folder with --data-dir.',
    );
  });

  it('--commands-dir: exits with code 1 and one line naming the folder', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'th-data-folder-'));
    after(() => rmSync(dataDir, { recursive: true, force: true }));
    const { code, stderr } = await serveExit(['--data-dir', dataDir, '--commands-dir', '/proc/nonexistent/x']);
    assert.equal(code, 1, stderr);
    assert.match(
      stderr,
      /^tiny-harness: Cannot create the commands folder "\/proc\/nonexistent\/x": no folder can be created there\. Choose another folder\.$/,
    );
  });
});
