/**
 * Follows a folder at a path for its owner: calls back a short, debounced while after the files
 * that matter in it (command files, instruction files) or, unless told otherwise, in its
 * subfolders change, and keeps following when the folder itself is replaced
 * (moved away, removed and made again, swapped for another). chokidar watches the folder's tree;
 * like `fs.watch` under it, it follows one folder, not a path, and goes silent when that folder
 * goes (measured with chokidar 4.0.3: after `rm -r` and `mkdir`, new files raise no event). So
 * the owner, which reads the folder anyway, says which folder it found there (`follow`) or that
 * there is none (`lost`), and this looks again in a while until there is one. Nothing here
 * reads files or keeps the process alive.
 */
import { basename, join, relative, sep } from 'node:path';
import type { FSWatcher } from 'chokidar';
import { describeError, type Logger } from './log.js';

export interface FolderWatcherOptions {
  /** Whether a change to this file matters (by its name; subfolders always do when they are followed). */
  relevant: (fileName: string) => boolean;
  /**
   * Follow the folder's own entries that matter, and nothing else: no subfolder, no other file
   * (a project's root holds instruction files beside a large tree that is none of their business).
   */
  topLevelOnly?: boolean;
  /** What the folder is, for the log (default "the commands folder"). */
  what?: string;
  /** Called once the changes have settled (`change`), or to look at the folder again (`retry`). */
  onChange: (why: 'change' | 'retry') => void;
  /** Quiet time after the last change before `onChange`. */
  debounceMs: number;
  log: Logger;
}

/** The longest a stream of changes can postpone `onChange`, so that constant writes still show. */
const MAX_POSTPONE_MS = 1000;
/** How often a folder that cannot be read or watched is looked at again. */
const RETRY_MS = 1000;

export class FolderWatcher {
  private watcher: FSWatcher | undefined;
  /** `dev:ino` of the folder followed now. */
  private followedId: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private firstPendingChange = 0;
  /** Settles the promise of the last `follow`. */
  private scanned: (() => void) | undefined;
  private closed = false;
  /** Counts `follow` and `unwatch` calls: a `follow` still loading chokidar is stale once another came. */
  private calls = 0;

  constructor(
    private readonly dir: string,
    private readonly options: FolderWatcherOptions,
  ) {}

  /**
   * The folder now at the path is `id` (`dev:ino`): follow it, unless it is the one followed
   * already. Resolves once the watches are in place (chokidar has scanned the tree), so that a
   * listing made after it misses no change.
   */
  async follow(id: string): Promise<void> {
    if (this.closed || this.followedId === id) return;
    this.unwatch();
    this.followedId = id;
    const call = ++this.calls;
    // chokidar is loaded here, once the harness serves, rather than on its way to serving.
    const { watch } = await import('chokidar');
    // Closed, lost or followed anew while it loaded: as when the watch ends before its scan.
    if (this.closed || call !== this.calls) return;
    const { relevant, topLevelOnly } = this.options;
    const watcher = watch(this.dir, {
      persistent: false,
      ignoreInitial: true,
      followSymlinks: false,
      ...(topLevelOnly
        ? { depth: 0, ignored: (path: string) => path !== this.dir && !relevant(basename(path)) }
        : {
            // Hidden files and folders hold no commands (the loader skips them too).
            ignored: (path: string) =>
              relative(this.dir, path)
                .split(sep)
                .some((part) => part.startsWith('.')),
          }),
    });
    this.watcher = watcher;
    watcher.on('all', (event, path) => {
      const folder = event === 'addDir' || event === 'unlinkDir';
      if ((folder && !topLevelOnly) || path === this.dir || relevant(basename(path))) this.changed();
    });
    // The folder itself moved away: chokidar emits nothing for it (measured), only the raw
    // event of the folder's watch, which names the folder. And chokidar drops a file's `change`
    // within 50 ms of its last one (measured: a write 28 ms after another raised none), which
    // the raw events of the file's watch still report.
    const own = basename(this.dir);
    watcher.on('raw', (_event, fileName) => {
      if (typeof fileName === 'string' && (fileName === own || relevant(basename(fileName)))) this.changed();
    });
    watcher.on('error', (error) => {
      if (watcher !== this.watcher) return;
      this.options.log.warn(
        `watching ${this.options.what ?? 'the commands folder'} stopped; looking again in a second`,
        {
          dir: this.dir,
          error: describeError(error),
        },
      );
      this.lost();
    });
    // Settled by its scan's end, or by the watcher's end (an error, a close) before it.
    return new Promise((resolve) => {
      this.scanned = resolve;
      watcher.once('ready', () => resolve());
    });
  }

  /**
   * Watches these subfolders too (paths within the folder, as a listing found them), when
   * chokidar has not: one made between its reading of a folder and its watch on it.
   */
  followSubfolders(paths: readonly string[]): void {
    const watcher = this.watcher;
    if (!watcher) return;
    const watched = watcher.getWatched();
    for (const path of paths) {
      const full = join(this.dir, path);
      if (!(full in watched)) watcher.add(full);
    }
  }

  /** There is no readable folder at the path: stop following, and look again in a while. */
  lost(): void {
    this.unwatch();
    if (this.closed || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.closed) this.options.onChange('retry');
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  /** Stops for good: no more callbacks. */
  close(): void {
    this.closed = true;
    this.unwatch();
    clearTimeout(this.timer);
    this.timer = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private changed(): void {
    if (this.closed) return;
    const now = Date.now();
    if (this.timer === undefined) this.firstPendingChange = now;
    clearTimeout(this.timer);
    const delay = Math.min(this.options.debounceMs, Math.max(0, this.firstPendingChange + MAX_POSTPONE_MS - now));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.closed) this.options.onChange('change');
    }, delay);
    this.timer.unref();
  }

  private unwatch(): void {
    this.calls++;
    // chokidar's close() only releases its watches; nothing of it need be awaited.
    void this.watcher?.close().catch(() => undefined);
    this.watcher = undefined;
    this.scanned?.();
    this.scanned = undefined;
    this.followedId = undefined;
  }
}
