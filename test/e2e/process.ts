/** Runs the real command line in a child process, as a user would, for restart and crash tests. */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliProgram, spawnGroup } from '../support/processes.js';

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** Sends the signal and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `program`: how node runs the command line; the built bundle by default. */
export async function startServerProcess(
  args: string[],
  env: Record<string, string> = {},
  program: string[] = cliProgram(),
): Promise<ServerProcess> {
  const child = spawnGroup(process.execPath, [...program, 'serve', '--port', '0', ...args], {
    env: { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 20000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${stderr}`));
    });
  });
  return {
    url,
    child,
    stderr: () => stderr,
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Writes `config.json` into `dir`: the fixture model server as the only provider, `small` the default. Returns its path. */
export function writeFixtureConfig(dir: string, baseURL: string): string {
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      defaultModel: 'fixture:small',
      detectOllama: false,
      providers: { fixture: { type: 'openai-compatible', baseURL, models: ['small', 'large'] } },
    }),
  );
  return file;
}
