/**
 * Running the command-line clients as a person or a script would: `send` as a child process
 * whose output and exit code are collected, `chat` in a tmux pane on a private socket whose
 * screen is read back. Every wait is bounded; everything started is stopped by `close()`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { program } from '../needs.js';
import { cliProgram, ROOT, spawnGroup, TMUX_SOCKET_PREFIX } from '../support/processes.js';
import { poll } from '../support/wait.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout as it arrived, chunk by chunk. */
  chunks: string[];
}

/** The environment of a client under test: no colors, no keys, nothing of a surrounding tmux. */
function clientEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' };
  delete env.TMUX;
  delete env.TMUX_PANE;
  delete env.NO_COLOR;
  return env;
}

/** Runs `tiny-harness <args>` to its end (killed after `timeoutMs`). */
export function runCli(args: string[], timeoutMs = 30000): Promise<CliResult> {
  return runToEnd(process.execPath, [...cliProgram(), ...args], args, timeoutMs);
}

/** Runs `tiny-harness <args>` with `input` piped to its standard input, as `printf … | tiny-harness …` does. */
export function runCliWithInput(args: string[], input: string, timeoutMs = 30000): Promise<CliResult> {
  const pipe = 'printf %s "$TINY_HARNESS_TEST_INPUT" | "$0" "$@"';
  return runToEnd('/bin/sh', ['-c', pipe, process.execPath, ...cliProgram(), ...args], args, timeoutMs, {
    TINY_HARNESS_TEST_INPUT: input,
  });
}

function runToEnd(
  command: string,
  argv: string[],
  args: string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGroup(command, argv, {
      cwd: ROOT,
      env: { ...clientEnv(), ...env },
    });
    const chunks: string[] = [];
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => chunks.push(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tiny-harness ${args.join(' ')} did not end within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: chunks.join(''), stderr, chunks });
    });
  });
}

/** The `task=<id> context=<id>` line `send` writes to standard error. */
export function taskLine(stderr: string): { taskId: string; contextId: string; state: string } {
  const match = /task=(\S+) context=(\S+)(?: state=(\S+))?/.exec(stderr);
  if (!match) throw new Error(`no task line in: ${stderr}`);
  return { taskId: match[1]!, contextId: match[2]!, state: match[3] ?? '' };
}

const exec = promisify(execFile);

/** The terminal the chat tests type into; a suite that uses it declares `needs(TMUX)`. */
/** The screen's lines without the empty ones at the bottom. */
export function lines(screen: string): string[] {
  const all = screen.split('\n').map((l) => l.trimEnd());
  while (all.length > 0 && all.at(-1) === '') all.pop();
  return all;
}

/** The chat's prompt while it waits for a message (another shows while a turn runs). */
export const PROMPT = '❯';

/** The prompt is back, empty, on the last line. */
export const atPrompt = (screen: string) => lines(screen).at(-1) === PROMPT;

export const TMUX = program('tmux', 'apt-get install -y tmux');

/**
 * A private tmux server (its own socket), so a test never touches the user's sessions. The
 * socket's name starts with the run's prefix: scripts/run-tests.mjs finds what a cancelled file left.
 */
export class Tmux {
  readonly socket = `${TMUX_SOCKET_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`;
  private count = 0;

  async run(...args: string[]): Promise<string> {
    const { stdout } = await exec(TMUX.path ?? 'tmux', ['-L', this.socket, '-f', '/dev/null', ...args], {
      env: clientEnv(),
      timeout: 10000,
    });
    return stdout;
  }

  /** Starts `tiny-harness chat <url>` in a 120x40 pane and waits for its welcome. */
  chat(url: string, extra: string[] = []): Promise<ChatPane> {
    return this.cli(['chat', url, ...extra], 'Ctrl+D exits');
  }

  /** Starts `tiny-harness <args>` in a 120x40 pane (a terminal) and waits until the screen shows `ready`. */
  async cli(args: string[], ready: string): Promise<ChatPane> {
    const name = `${args[0] ?? 'cli'}-${++this.count}`;
    const command = [process.execPath, ...cliProgram(), ...args]
      .map((word) => `'${word.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    // The shell around the program writes its exit status on the screen; remain-on-exit keeps
    // the pane (and so the screen) after it has ended. exit-empty off: the server outlives its
    // last session (until close), so the next test's session never meets a server shutting down.
    const shell = `${command}; status=$?; printf '\\n[exited %s]\\n' "$status"; exit "$status"`;
    await this.run(
      'new-session',
      '-d',
      '-x',
      '120',
      '-y',
      '40',
      '-s',
      name,
      '-c',
      ROOT,
      shell,
      ';',
      'set-option',
      '-t',
      name,
      'remain-on-exit',
      'on',
      ';',
      'set-option',
      '-g',
      'exit-empty',
      'off',
    );
    const pane = new ChatPane(this, name);
    await pane.waitFor((screen) => screen.includes(ready));
    return pane;
  }

  async close(): Promise<void> {
    await this.run('kill-server').catch(() => {});
  }
}

export class ChatPane {
  constructor(
    private readonly tmux: Tmux,
    readonly name: string,
  ) {}

  /** Keys as tmux names them: text, `Enter`, `Tab`, `C-c`, `C-d`. */
  async keys(...keys: string[]): Promise<void> {
    await this.tmux.run('send-keys', '-t', this.name, ...keys);
  }

  /** Pastes text as a terminal does when the program asked for bracketed paste (`ESC[200~ … ESC[201~`). */
  async paste(text: string): Promise<void> {
    await this.tmux.run('set-buffer', '-b', 'paste', '--', text);
    await this.tmux.run('paste-buffer', '-p', '-d', '-b', 'paste', '-t', this.name);
  }

  /** Types text literally (no key names). */
  async type(text: string): Promise<void> {
    await this.tmux.run('send-keys', '-t', this.name, '-l', text);
  }

  /**
   * The screen's text; with `escapes`, with its colors and styles as escape sequences too; with
   * `joined`, each line the terminal wrapped by itself as one.
   */
  async screen(options: { escapes?: boolean; joined?: boolean } = {}): Promise<string> {
    const flags = [...(options.escapes ? ['-e'] : []), ...(options.joined ? ['-J'] : [])];
    return this.tmux.run('capture-pane', '-p', ...flags, '-t', this.name);
  }

  /** Where the cursor is: its column and row, from 0 at the top left. */
  async cursor(): Promise<{ x: number; y: number }> {
    const [x, y] = (await this.tmux.run('display-message', '-p', '-t', this.name, '#{cursor_x} #{cursor_y}'))
      .trim()
      .split(' ')
      .map(Number);
    return { x: x!, y: y! };
  }

  /** Polls the screen (tmux announces no change) until `test` holds; a failure shows the screen. */
  async waitFor(test: (screen: string) => boolean): Promise<string> {
    let screen = '';
    const shows = async () => test((screen = await this.screen()));
    await poll('the screen to show what was expected', shows, { seen: () => `\n${screen}` });
    return screen;
  }

  /** Resolves with the chat's exit status once it has exited (the pane stays, showing it). */
  async exited(): Promise<number> {
    const screen = await this.waitFor((s) => /\[exited \d+\]/.test(s));
    return Number(/\[exited (\d+)\]/.exec(screen)![1]);
  }

  async kill(): Promise<void> {
    await this.tmux.run('kill-session', '-t', this.name).catch(() => {});
  }
}
