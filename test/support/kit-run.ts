/**
 * Runs a server (it names its URL on its first line of output) as a child process, and
 * the conformance kit's command line against it: for the tests that check a server built on the
 * packages as an embedder builds one (the example, the packed packages).
 */
import assert from 'node:assert/strict';
import type { ConformReport } from '@tiny-harness/conform';
import { spawnGroup } from './processes.js';
import { waitFor, within } from './wait.js';

export interface ServerScript {
  url: string;
  stop(): Promise<void>;
}

/** Starts `node <script> 0` in `cwd` and waits for the URL it prints. */
export function startServerScript(script: string, cwd: string): Promise<ServerScript> {
  return startServer(process.execPath, [script, '0'], cwd);
}

/** Starts `command args` in `cwd` and waits for the first line of its output, which names its URL. */
export async function startServer(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServerScript> {
  const script = [command, ...args].join(' ');
  const child = spawnGroup(command, args, { cwd, env });
  let out = '';
  let err = '';
  let exited = false;
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.once('exit', () => (exited = true));
  let ended = false;
  child.stdout.once('end', () => (ended = true));
  // Its output ending is the other answer: it exited without a URL, and its errors say why.
  const url = await waitFor(`${script} prints its URL`, child.stdout, ['data', 'end'], () => {
    assert.ok(!exited && !ended, `${script} exited: ${err}`);
    return /^(?:[^\n]* )?(http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)?.[1];
  });
  return {
    url,
    async stop() {
      if (exited) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await within(`${script} stops`, gone);
    },
  };
}

/** Runs `node <bin> <url> --json [options]` in `cwd` and returns its exit code and report. */
export async function runKit(
  bin: string,
  url: string,
  cwd: string,
  options: string[] = [],
): Promise<{ code: number; report: ConformReport }> {
  const child = spawnGroup(process.execPath, [bin, url, '--json', ...options], { cwd, env: process.env });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await within(
    'the kit ends',
    new Promise<number>((resolve) => child.once('close', (c) => resolve(c ?? -1))),
  );
  assert.ok(out.trim().startsWith('{'), `the kit printed no report (exit ${code}): ${err}`);
  return { code, report: JSON.parse(out) as ConformReport };
}

/** The rules with a failed check, each once, sorted. */
export function failedRules(report: ConformReport): string[] {
  return [...new Set(report.results.filter((r) => r.outcome === 'fail').map((r) => r.rule))].sort();
}
