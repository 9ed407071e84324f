/**
 * The built-in `shell` tool (docs/workspace.md): one command, run in the workspace's root with a
 * small environment (as MCP stdio servers get: `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`,
 * `USER`), killed past its timeout, its output bounded. A command runs only when granted
 * (TOOL-6): it matches a configured `Bash(prefix:*)` rule, or a person approved the call.
 *
 * A simple command (words only: no quotes, pipes, redirections, variables, globs or `;`) runs
 * without a shell, its words as the program and its arguments; only such a command can match
 * a rule, so `git diff; rm -rf ~` is never taken for `git diff`. Anything else runs under
 * `/bin/sh -c` and always asks.
 */
import { spawn } from 'node:child_process';
import { SHELL_RULE } from '../config/workspace.js';
import { WorkspaceRefusal } from './workspace-root.js';

/** Words of letters, digits and `_-.,/:=+@%`, separated by spaces or tabs. */
const SIMPLE_COMMAND = /^[A-Za-z0-9_\-.,/:=+@% \t]+$/;
const INHERITED_ENV = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

export interface ShellOptions {
  cwd: string;
  /** Claude Code's rules: `Bash(git diff:*)`, `Bash(ls)`. */
  allow: readonly string[];
  timeoutMs: number;
  maxOutputChars: number;
  env: Readonly<Record<string, string | undefined>>;
}

/** A simple command's words, or `undefined` when it needs a shell. */
export function simpleWords(command: string): string[] | undefined {
  if (!SIMPLE_COMMAND.test(command)) return undefined;
  const words = command.trim().split(/[ \t]+/);
  return words[0] === '' ? undefined : words;
}

/** Whether `command` is granted by one of `rules` without asking: a simple command that matches one. */
export function shellAllowed(rules: readonly string[], command: string): boolean {
  const words = simpleWords(command);
  if (words === undefined) return false;
  const normal = words.join(' ');
  return rules.some((rule) => {
    const inner = SHELL_RULE.exec(rule)?.[1]?.trim();
    if (inner === undefined) return false;
    if (!inner.endsWith(':*')) return normal === inner;
    const prefix = inner.slice(0, -2).trim();
    return normal === prefix || normal.startsWith(`${prefix} `);
  });
}

export function commandOf(input: unknown): string {
  const command = input && typeof input === 'object' ? (input as Record<string, unknown>).command : undefined;
  if (typeof command !== 'string' || command.trim() === '')
    throw new WorkspaceRefusal('The input needs "command", a string.');
  return command;
}

/** Runs the command; resolves with its exit and output (never rejects for the command's own failure). */
export function runShell(
  command: string,
  options: ShellOptions,
  signal: AbortSignal,
): Promise<{ ok: boolean; output: string }> {
  const words = simpleWords(command);
  const [file, args] = words ? [words[0]!, words.slice(1)] : ['/bin/sh', ['-c', command]];
  const env = Object.fromEntries(
    INHERITED_ENV.flatMap((name) => {
      const value = options.env[name];
      return value === undefined || value.startsWith('()') ? [] : [[name, value]];
    }),
  );
  return new Promise((resolve) => {
    // Its own process group, so that a timeout ends what the command started too.
    const child = spawn(file, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let total = 0;
    let ended: string | undefined;
    const take = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      total += text.length;
      if (output.length < options.maxOutputChars) output += text.slice(0, options.maxOutputChars - output.length);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const kill = (why: string) => {
      ended ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(
      () => kill(`The command did not finish within ${options.timeoutMs} ms and was killed.`),
      options.timeoutMs,
    );
    const onAbort = () => kill('The command was canceled.');
    signal.addEventListener('abort', onAbort, { once: true });
    let done = false;
    const finish = (ok: boolean, status: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      const cut =
        total > output.length ? `\n[output cut: the first ${output.length} of ${total} characters are shown]` : '';
      const shown = `${output}${cut}`;
      resolve({ ok, output: shown === '' || shown.endsWith('\n') ? `${shown}${status}` : `${shown}\n${status}` });
    };
    child.on('error', (error: NodeJS.ErrnoException) =>
      finish(
        false,
        error.code === 'ENOENT'
          ? `No program "${file}" was found.`
          : `The command could not start (${error.code ?? 'error'}).`,
      ),
    );
    child.on('close', (code, killedBy) => {
      if (ended !== undefined) finish(false, ended);
      else if (code === 0) finish(true, '[exit code 0]');
      else finish(false, code === null ? `[ended by ${killedBy}]` : `[exit code ${code}]`);
    });
  });
}
