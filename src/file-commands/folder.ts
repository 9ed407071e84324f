/**
 * Keeps a registry in step with a commands folder. The file commands come after whatever was
 * registered before `load()` (the built-ins, the embedder's own), in file-name order, and
 * stay so: every reload unregisters what this folder registered and registers the new set in
 * order. Nothing else in the registry is touched, and a file may not replace a command the
 * folder did not register. A command removed while one of its sub-tasks runs does not
 * disturb that sub-task: only the registry changes.
 */
import { mkdirSync, watch, type FSWatcher } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { CommandRegistry, RegisteredCommand } from '../commands/index.js';
import { HarnessError } from '../errors.js';
import { describeError, silentLogger, type Logger } from '../log.js';
import type { SubtaskStarter } from '../runtime/subtask-starter.js';
import { fileCommandDefinition } from './file-command.js';
import { isCommandFileName, loadCommandFiles, type LoadedCommandFiles } from './load.js';

export interface CommandFolderOptions {
  /** The folder of `*.md` command files; created when missing. */
  dir: string;
  /** Where the commands are registered. */
  registry: CommandRegistry;
  /** Starts the sub-task a file command runs. */
  starter: SubtaskStarter;
  /** Problems are warnings naming the file; changes are info lines. Default: silent. */
  log?: Logger;
  /** Names no file may take even when they are not registered (yet). */
  reservedNames?: Iterable<string>;
  /** Quiet time after the last change before the folder is read again. Default 150 ms. */
  debounceMs?: number;
}

/** The longest a stream of changes can postpone a reload, so that constant writes still show. */
const MAX_POSTPONE_MS = 1000;

export class CommandFolder {
  readonly dir: string;
  private readonly registry: CommandRegistry;
  private readonly starter: SubtaskStarter;
  private readonly log: Logger;
  private readonly reservedNames: readonly string[];
  private readonly debounceMs: number;
  /** What this folder registered, by name, in order: the exact objects, so a stranger's same-named entry is never removed. */
  private registered = new Map<string, RegisteredCommand>();
  /** Reloads run one after another, so an older read never lands after a newer one. */
  private queue: Promise<void> = Promise.resolve();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private firstPendingChange = 0;
  private lastSignature = '';
  private closed = false;

  constructor(options: CommandFolderOptions) {
    this.dir = options.dir;
    this.registry = options.registry;
    this.starter = options.starter;
    this.log = options.log ?? silentLogger;
    this.reservedNames = [...(options.reservedNames ?? [])];
    this.debounceMs = options.debounceMs ?? 150;
  }

  /** The names of the file commands registered now, in order. */
  get names(): string[] {
    return [...this.registered.keys()];
  }

  /**
   * Creates the folder if needed, reads it and registers its commands after those already
   * registered. Each skipped file is logged as a warning with its path and the reason.
   * Throws only when the folder cannot be created (`config_unreadable`).
   */
  async load(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true });
    } catch (error) {
      throw new HarnessError('config_unreadable', `Cannot create the commands folder "${this.dir}": ${describeError(error)}. Choose another folder.`, { cause: error });
    }
    await this.reload();
  }

  /** Reads the folder again and brings the registry in step; resolves when it has. */
  reload(): Promise<void> {
    const next = this.queue.then(() => this.sync());
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Follows the folder from now on: files added, changed, renamed or removed show in the
   * registry about `debounceMs` after the last change. Saving by rename (write a temporary
   * file, rename it over the old one) works too, since the whole folder is read again.
   * The watcher does not keep the process alive on its own. Calling it twice does nothing.
   */
  watch(): void {
    if (this.watcher || this.closed) return;
    mkdirSync(this.dir, { recursive: true });
    this.watcher = watch(this.dir, { persistent: false }, (_event, fileName) => {
      if (fileName === null || isCommandFileName(String(fileName))) this.schedule();
    });
    this.watcher.on('error', (error) => {
      this.log.warn('watching the commands folder stopped; restart to pick up changes', { dir: this.dir, error: describeError(error) });
      this.watcher?.close();
      this.watcher = undefined;
    });
  }

  /**
   * Stops watching and drops a pending reload; resolves once a reload under way has ended
   * (without touching the registry). The registry keeps the commands it has; a closed
   * folder does not load again.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    this.watcher = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.queue;
  }

  private schedule(): void {
    if (this.closed) return;
    const now = Date.now();
    if (this.timer === undefined) this.firstPendingChange = now;
    clearTimeout(this.timer);
    const delay = Math.min(this.debounceMs, Math.max(0, this.firstPendingChange + MAX_POSTPONE_MS - now));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.reload().catch((error: unknown) => this.log.error('reloading the commands folder failed', { dir: this.dir, error: describeError(error) }));
    }, delay);
    this.timer.unref();
  }

  private async sync(): Promise<void> {
    if (this.closed) return;
    const loaded = await loadCommandFiles(this.dir, { reservedNames: this.takenNames() });
    if (!this.closed) this.apply(loaded);
  }

  /** Names a file may not take: the reserved ones and whatever is registered but not by this folder. */
  private takenNames(): Set<string> {
    const taken = new Set(this.reservedNames);
    for (const command of this.registry.list()) if (this.registered.get(command.name) !== command) taken.add(command.name);
    return taken;
  }

  /** Swaps the old set for the new one in one synchronous step, so no request sees half of it. */
  private apply({ commands, problems }: LoadedCommandFiles): void {
    for (const [name, command] of this.registered) if (this.registry.get(name) === command) this.registry.unregister(name);
    this.registered = new Map();
    for (const command of commands) {
      try {
        this.registered.set(command.name, this.registry.register(fileCommandDefinition(command, this.starter)));
      } catch (error) {
        // Registered by someone else since the folder was read.
        problems.push(`${command.path}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    for (const problem of problems) this.log.warn(`command file skipped: ${problem}`);
    const signature = JSON.stringify(commands.filter((c) => this.registered.has(c.name)));
    if (signature !== this.lastSignature) {
      this.log.info('command files loaded', { dir: this.dir, commands: this.names.map((name) => `/${name}`).join(' ') || '(none)' });
      this.lastSignature = signature;
    }
  }
}
