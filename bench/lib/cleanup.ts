/**
 * Temporary folders and child processes a benchmark made, removed when it ends, however it
 * ends (normal exit, an error, Ctrl+C).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

const dirs = new Set<string>();
const children = new Set<ChildProcess>();

function cleanUp(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

/** A new folder under the system's temp folder, removed at exit. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(os.tmpdir(), `tiny-harness-bench-${prefix}-`));
  dirs.add(dir);
  return dir;
}

/** Removes `dir` at exit too (for a folder made elsewhere, e.g. under bench/). */
export function trackDir(dir: string): string {
  dirs.add(dir);
  return dir;
}

/** Removes a folder made by `tempDir` now. */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

/** Killed at exit if still running. */
export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
