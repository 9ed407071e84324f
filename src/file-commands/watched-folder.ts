/**
 * A folder read whole and read again as it changes, as the skills and agents folders are: made
 * when missing, watched, each reading queued after the last, and, while the folder cannot be
 * read, what was read before kept and the problem said once.
 */
import { stat } from 'node:fs/promises';
import { HarnessError } from '../errors.js';
import { FolderWatcher } from '../folder-watcher.js';
import { describeError, type Logger } from '../log.js';
import { makeFolder, whyNoFolder } from '../make-folder.js';
import { whyUnreadable } from './load.js';

/** What one reading gives: why the folder itself could not be read, or the subfolders to follow too. */
export interface FolderReading {
  folderProblem?: string;
  folders?: string[];
}

export interface WatchedFolderOptions<T extends FolderReading> {
  dir: string;
  /** What the folder holds, plural, for messages: `skills` gives "the skills folder", "its skills". */
  holds: string;
  log: Logger;
  /** Quiet time after the last change before the folder is read again. Default 150 ms. */
  debounceMs?: number;
  /** Whether a changed file's name matters; with `topLevelOnly`, files in subfolders never do. */
  relevant: (fileName: string) => boolean;
  topLevelOnly?: boolean;
  read: (dir: string) => Promise<T>;
  /** Takes a reading of a folder that could be read. */
  apply: (reading: T) => void;
}

export class WatchedFolder<T extends FolderReading> {
  private watcher: FolderWatcher | undefined;
  private queue: Promise<void> = Promise.resolve();
  /** Why the folder could not be read last time, so that retries warn once. */
  private folderProblem: string | undefined;
  private closed = false;

  constructor(private readonly options: WatchedFolderOptions<T>) {}

  private get what(): string {
    return `the ${this.options.holds} folder`;
  }

  /** Creates the folder if needed and reads it. Throws only when the folder cannot be made. */
  async load(): Promise<void> {
    try {
      makeFolder(this.options.dir);
    } catch (error) {
      throw new HarnessError(
        'config_unreadable',
        `Cannot create ${this.what} "${this.options.dir}": ${whyNoFolder(error) ?? describeError(error)}. Choose another folder.`,
        { cause: error },
      );
    }
    await this.reload();
  }

  /** Follows the folder from now on; resolves once the watch is in place and the folder read again. */
  watch(): Promise<void> {
    if (this.watcher || this.closed) return Promise.resolve();
    const { dir, relevant, topLevelOnly, debounceMs, log } = this.options;
    this.watcher = new FolderWatcher(dir, {
      relevant,
      topLevelOnly,
      what: this.what,
      onChange: () => void this.reload(),
      debounceMs: debounceMs ?? 150,
      log,
    });
    return this.reload();
  }

  /** Reads the folder again; resolves when the reading is applied. Never rejects. */
  reload(): Promise<void> {
    this.queue = this.queue.then(() =>
      this.sync().catch((error: unknown) =>
        this.options.log.error(`reading ${this.what} failed`, { dir: this.options.dir, error: describeError(error) }),
      ),
    );
    return this.queue;
  }

  close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    return this.queue;
  }

  private async sync(): Promise<void> {
    if (this.closed) return;
    const { dir, log } = this.options;
    let id: string;
    try {
      const stats = await stat(dir);
      id = `${stats.dev}:${stats.ino}`;
    } catch (error) {
      this.unreadable(whyUnreadable(error));
      return;
    }
    await this.watcher?.follow(id);
    const reading = await this.options.read(dir);
    if (this.closed) return;
    if (reading.folderProblem !== undefined) {
      this.unreadable(reading.folderProblem);
      return;
    }
    if (this.folderProblem !== undefined) log.info(`${this.what} can be read again`, { dir });
    this.folderProblem = undefined;
    if (reading.folders) this.watcher?.followSubfolders(reading.folders);
    this.options.apply(reading);
  }

  /** The folder is gone or unreadable: keep what was read, say so once (the watcher looks again every second). */
  private unreadable(problem: string): void {
    const { holds, dir, log } = this.options;
    if (this.folderProblem !== problem)
      log.warn(`${this.what} cannot be read (${problem}); its ${holds} stay as they were until it can`, { dir });
    this.folderProblem = problem;
    this.watcher?.lost();
  }
}
