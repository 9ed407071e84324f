/**
 * Keeps a registry in step with a commands folder. The file commands come after whatever was
 * registered before `load()` (the built-ins, the embedder's own), in file-name order, and
 * stay so: every reload unregisters what this folder registered and registers the new set in
 * order. Nothing else in the registry is touched, and a file may not replace a command the
 * folder did not register. A command removed while one of its sub-tasks runs does not
 * disturb that sub-task: only the registry changes.
 *
 * A reload never hangs the folder: one that takes longer than `reloadTimeoutMs` is abandoned
 * with a warning and the commands stay as they were; so do they while the folder itself cannot
 * be read (removed, replaced by a file), until it is back. Either way later reloads still run,
 * and `close()` never waits for a read to finish.
 */
import { stat } from 'node:fs/promises';
import { sep } from 'node:path';
import type { CommandRegistry, RegisteredCommand } from '../commands/index.js';
import { HarnessError } from '../errors.js';
import { makeFolder, whyNoFolder } from '../make-folder.js';
import { describeError, silentLogger, type Logger } from '../log.js';
import type { CommandStarter } from '../engine-ports.js';
import type { MarkerGrants } from './markers.js';
import { fileCommandDefinition } from './file-command.js';
import { FolderWatcher } from '../folder-watcher.js';
import {
  isCommandFileName,
  loadCommandFiles,
  whyUnreadable,
  type LoadCommandFilesOptions,
  type LoadedCommandFiles,
} from './load.js';

export interface CommandFolderOptions {
  /** The folder of `*.md` command files; created when missing. */
  dir: string;
  /** Where the commands are registered. */
  registry: CommandRegistry;
  /** Starts what a file command runs: its turn inline, or a sub-task (CMD-38). */
  starter: CommandStarter;
  /** What the configuration lets files' `` !`cmd` `` and `@path` markers do; none: they are refused. */
  grants?: MarkerGrants;
  /** Problems are warnings naming the file; changes are info lines. Default: silent. */
  log?: Logger;
  /** Names no file may take even when they are not registered (yet). */
  reservedNames?: Iterable<string>;
  /** Quiet time after the last change before the folder is read again. Default 150 ms. */
  debounceMs?: number;
  /** The longest one reading of the folder may take before it is abandoned. Default 5000 ms. */
  reloadTimeoutMs?: number;
  /** Reads the folder; default {@link loadCommandFiles}. A test double may stand in for a slow disk. */
  read?: (dir: string, options: LoadCommandFilesOptions) => Promise<LoadedCommandFiles>;
}

export class CommandFolder {
  readonly dir: string;
  private readonly registry: CommandRegistry;
  private readonly starter: CommandStarter;
  private readonly grants: MarkerGrants | undefined;
  private readonly log: Logger;
  private readonly reservedNames: readonly string[];
  private readonly debounceMs: number;
  private readonly reloadTimeoutMs: number;
  private readonly read: NonNullable<CommandFolderOptions['read']>;
  /** What this folder registered, by name, in order: the exact objects, so a stranger's same-named entry is never removed. */
  private registered = new Map<string, RegisteredCommand>();
  /** Reloads run one after another, so an older read never lands after a newer one. */
  private queue: Promise<void> = Promise.resolve();
  /** Aborts the reload under way (on timeout or close). */
  private current: AbortController | undefined;
  /** Set by watch(). */
  private watcher: FolderWatcher | undefined;
  private lastSignature = '';
  private lastProblems = '[]';
  /** The files skipped by the last reload, each `<file>: <reason>` with the path inside the folder only. */
  private skippedNow: string[] = [];
  /** Why the folder could not be read last time, so that polling warns once, not every second. */
  private folderProblem: string | undefined;
  private closed = false;

  constructor(options: CommandFolderOptions) {
    this.dir = options.dir;
    this.registry = options.registry;
    this.starter = options.starter;
    this.grants = options.grants;
    this.log = options.log ?? silentLogger;
    this.reservedNames = [...(options.reservedNames ?? [])];
    this.debounceMs = options.debounceMs ?? 150;
    this.reloadTimeoutMs = options.reloadTimeoutMs ?? 5000;
    this.read = options.read ?? loadCommandFiles;
  }

  /** The files the last reload skipped, each `<file>: <reason>` (no path outside the folder), for `/help`. */
  get skipped(): readonly string[] {
    return this.skippedNow;
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
      makeFolder(this.dir);
    } catch (error) {
      throw new HarnessError(
        'config_unreadable',
        `Cannot create the commands folder "${this.dir}": ${whyNoFolder(error) ?? describeError(error)}. Choose another folder.`,
        { cause: error },
      );
    }
    await this.reload();
  }

  /**
   * Reads the folder again and brings the registry in step; resolves when it has, or when the
   * reading was abandoned (too slow, or the folder closed). Never rejects for a slow or broken
   * folder: that is a warning in the log.
   */
  reload(): Promise<void> {
    return this.enqueue(false);
  }

  /** `quiet`: skipped files already reported by the last reload are not reported again. */
  private enqueue(quiet: boolean): Promise<void> {
    const next = this.queue.then(() => this.sync(quiet));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Follows the folder from now on: files added, changed, renamed or removed show in the
   * registry about `debounceMs` after the last change. Saving by rename (write a temporary
   * file, rename it over the old one) works too, since the whole folder is read again, and so
   * does replacing the folder itself. Starts with one reload, which catches changes made since
   * `load()` without repeating its warnings; the promise, which never rejects, resolves when
   * that reload has ended. The watcher does not keep the process alive on its own. Calling it
   * twice does nothing.
   */
  watch(): Promise<void> {
    if (this.watcher || this.closed) return Promise.resolve();
    this.watcher = new FolderWatcher(this.dir, {
      relevant: isCommandFileName,
      onChange: (why) => void this.reloadInBackground(why === 'retry'),
      debounceMs: this.debounceMs,
      log: this.log,
    });
    return this.reloadInBackground(true);
  }

  /**
   * Stops watching, drops a pending reload and abandons one under way (without touching the
   * registry); resolves at once after that. The registry keeps the commands it has; a closed
   * folder does not load again.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    this.current?.abort();
    await this.queue;
  }

  private reloadInBackground(quiet: boolean): Promise<void> {
    return this.enqueue(quiet).catch((error: unknown) =>
      this.log.error('reloading the commands folder failed', { dir: this.dir, error: describeError(error) }),
    );
  }

  /** One reload, bounded in time: abandoned on timeout or close, leaving the registry as it was. */
  private async sync(quiet: boolean): Promise<void> {
    if (this.closed) return;
    const abort = new AbortController();
    this.current = abort;
    const timer = setTimeout(() => abort.abort(), this.reloadTimeoutMs);
    try {
      const done = await untilAborted(this.readFolder(abort.signal, quiet), abort.signal);
      if (this.closed) return;
      if (!done) {
        this.log.warn(
          `reading the commands folder took longer than ${this.reloadTimeoutMs} ms and was abandoned; the commands stay as they were`,
          { dir: this.dir },
        );
      }
    } finally {
      clearTimeout(timer);
      if (this.current === abort) this.current = undefined;
    }
  }

  /** Reads the folder and applies what it holds, unless aborted first. Resolves true when it finished. */
  private async readFolder(signal: AbortSignal, quiet: boolean): Promise<true> {
    let id: string;
    try {
      const stats = await stat(this.dir);
      if (!stats.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      id = `${stats.dev}:${stats.ino}`;
    } catch (error) {
      if (!signal.aborted) this.folderUnreadable(whyUnreadable(error));
      return true;
    }
    if (signal.aborted) return true;
    // Watch before listing, so that a change made during the listing is not missed.
    await this.watcher?.follow(id);
    if (signal.aborted) return true;
    const loaded = await this.read(this.dir, { reservedNames: this.takenNames(), signal });
    if (signal.aborted || this.closed) return true;
    if (loaded.folderProblem !== undefined) {
      this.folderUnreadable(loaded.folderProblem);
      return true;
    }
    if (this.folderProblem !== undefined) this.log.info('the commands folder can be read again', { dir: this.dir });
    this.folderProblem = undefined;
    this.watcher?.followSubfolders(loaded.folders ?? []);
    this.apply(loaded, quiet);
    return true;
  }

  /** The folder is gone or unreadable: keep the commands, say so once, look again later. */
  private folderUnreadable(problem: string): void {
    if (this.folderProblem !== problem) {
      this.log.warn(`the commands folder cannot be read (${problem}); its commands stay as they were until it can`, {
        dir: this.dir,
      });
      this.folderProblem = problem;
    }
    this.watcher?.lost();
  }

  /** Names a file may not take: the reserved ones and whatever is registered but not by this folder. */
  private takenNames(): Set<string> {
    const taken = new Set(this.reservedNames);
    for (const command of this.registry.list())
      if (this.registered.get(command.name) !== command) taken.add(command.name);
    return taken;
  }

  /** Swaps the old set for the new one in one synchronous step, so no request sees half of it. */
  private apply({ commands, problems }: LoadedCommandFiles, quiet: boolean): void {
    for (const [name, command] of this.registered)
      if (this.registry.get(name) === command) this.registry.unregister(name);
    this.registered = new Map();
    for (const command of commands) {
      try {
        this.registered.set(
          command.name,
          this.registry.register(fileCommandDefinition(command, this.starter, this.log, this.grants)),
        );
      } catch (error) {
        // Registered by someone else since the folder was read.
        problems.push(`${command.path}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    // A reload the user did not cause (the one watch() starts with, a retry) repeats nothing already said.
    const problemSignature = JSON.stringify(problems);
    if (!quiet || problemSignature !== this.lastProblems)
      for (const problem of problems) this.log.warn(`command file skipped: ${problem}`);
    this.lastProblems = problemSignature;
    // A user may read these (`/help`): the folder's own path stays in the log.
    const prefix = `${this.dir}${sep}`;
    this.skippedNow = problems.map((problem) => (problem.startsWith(prefix) ? problem.slice(prefix.length) : problem));
    const signature = JSON.stringify(commands.filter((c) => this.registered.has(c.name)));
    if (signature !== this.lastSignature) {
      this.log.info('command files loaded', {
        dir: this.dir,
        commands: this.names.map((name) => `/${name}`).join(' ') || '(none)',
      });
      this.lastSignature = signature;
    }
  }
}

/** Resolves with `work`'s value, or with undefined as soon as `signal` aborts (`work` is left to finish on its own). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
