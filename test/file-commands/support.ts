import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import {
  CommandRegistry,
  type CommandDefinition,
  type CommandInvocation,
  type CommandResult,
  type RegisteredCommand,
} from '../../src/commands/index.js';
import type { Logger } from '../../src/log.js';
import type { CommandStarter, CommandTurn, CommandTurnOptions, SubtaskOptions } from '../../src/engine-ports.js';

/** Shared set-up for the file-command tests: temporary folders, a recording starter, invocations. */

/** A fresh temporary folder, removed by `dispose`. */
export function tempFolder(): { dir: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-commands-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The text of a command file with the given front-matter lines and body. */
export function commandFile(frontMatter: string[], body = 'Do $ARGUMENTS.'): string {
  return ['---', ...frontMatter, '---', body, ''].join('\n');
}

/** Creates a named pipe (FIFO) at `path`: opening it for reading waits for a writer. */
export function makeFifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

export function writeCommand(dir: string, fileName: string, description: string, body = 'Do $ARGUMENTS.'): void {
  writeFileSync(join(dir, fileName), commandFile([`description: ${description}`], body));
}

export interface StartCall {
  parent: Task;
  instruction: string;
  options: SubtaskOptions;
}

export interface TurnCall {
  task: Task;
  prompt: string;
  options: CommandTurnOptions;
}

/**
 * A `CommandStarter` that records each call: sub-tasks answer `sub-1`, `sub-2`, ...; inline turns
 * start (or are `busy`); `failWith` makes it throw instead, `hold` makes `start` wait until
 * `release()` is called.
 */
export class RecordingStarter implements CommandStarter {
  readonly calls: StartCall[] = [];
  readonly turns: TurnCall[] = [];
  busy = false;
  failWith: unknown;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
  }

  async start(parent: Task, instruction: string, options: SubtaskOptions): Promise<string> {
    this.calls.push({ parent, instruction, options });
    if (this.failWith !== undefined) throw this.failWith;
    await this.gate;
    return `sub-${this.calls.length}`;
  }

  prepare(task: Task, prompt: string, options: CommandTurnOptions): Promise<CommandTurn> {
    this.turns.push({ task, prompt, options });
    if (this.failWith !== undefined) return Promise.reject(this.failWith);
    if (this.busy) return Promise.resolve({ kind: 'busy' });
    return Promise.resolve({ kind: 'start', run: async function* () {} });
  }
}

export function parentTask(): Task {
  return {
    id: 'parent-1',
    contextId: 'context-1',
    status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [],
    metadata: {},
  };
}

/** Runs registered command `name` as if `/<name> <args>` had been sent on `task`. */
export async function invoke(
  registry: CommandRegistry,
  name: string,
  args: string,
  task: Task = parentTask(),
): Promise<CommandResult> {
  const command = registry.get(name);
  if (!command) throw new Error(`/${name} is not registered`);
  const message: Message = {
    messageId: 'm-1',
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'text', value: `/${name} ${args}` }, mediaType: 'text/plain', filename: '', metadata: {} },
    ],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
  const invocation: CommandInvocation = {
    name,
    args,
    task,
    message,
    callContext: new ServerCallContext({ requestedVersion: '1.0' }),
  };
  return command.handler(invocation);
}

/** A logger that keeps its lines, `level message` with the fields as JSON, and emits `line` on each. */
export function recordingLogger(): Logger & { lines: string[]; events: EventEmitter } {
  const lines: string[] = [];
  const events = new EventEmitter();
  const emit = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push(`${level} ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`);
    events.emit('line');
  };
  return { lines, events, debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** A registry that emits `change` whenever a command is registered or removed, for a test to wait on. */
export class ObservedRegistry extends CommandRegistry {
  readonly changes = new EventEmitter();

  override register(definition: CommandDefinition): RegisteredCommand {
    const registered = super.register(definition);
    this.changes.emit('change');
    return registered;
  }

  override unregister(name: string): boolean {
    const removed = super.unregister(name);
    this.changes.emit('change');
    return removed;
  }
}
