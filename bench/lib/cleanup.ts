/**
 * Temporary folders and child processes a benchmark made, removed when it ends, however it
 * ends (normal exit, an error, Ctrl+C); and asynchronous clean-ups (a PostgreSQL schema to
 * drop), which a benchmark runs itself when it ends and which run here on Ctrl+C.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

const dirs = new Set<string>();
const children = new Set<ChildProcess>();
const asyncCleanUps = new Set<() => Promise<unknown>>();
/** How long Ctrl+C waits for the asynchronous clean-ups before exiting anyway. */
const ASYNC_CLEAN_UP_MS = 5_000;

function cleanUp(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // The children first: a schema is dropped only once nothing uses it.
    cleanUp();
    const timeout = new Promise((resolve) => setTimeout(resolve, ASYNC_CLEAN_UP_MS).unref());
    void Promise.race([Promise.allSettled([...asyncCleanUps].map((run) => run())), timeout]).finally(() =>
      process.exit(130),
    );
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

/** Runs `run` on Ctrl+C (after the children are killed); the benchmark runs it itself otherwise, then calls the returned function. */
export function onInterrupt(run: () => Promise<unknown>): () => void {
  asyncCleanUps.add(run);
  return () => asyncCleanUps.delete(run);
}
