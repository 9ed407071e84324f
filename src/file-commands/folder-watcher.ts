/**
 * Follows a folder at a path for its owner: calls back a short, debounced while after files in
 * it change, and keeps following when the folder itself is replaced (moved away, removed and
 * made again, swapped for another). An `fs.watch` watcher follows one folder, not a path, and
 * goes silent when that folder goes; so the owner, which reads the folder anyway, says which
 * folder it found there (`follow`) or that there is none (`lost`), and this looks again in a
 * while until there is one. Nothing here reads files or keeps the process alive.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, join } from 'node:path';
import { describeError, type Logger } from '../log.js';

export interface FolderWatcherOptions {
  /** Whether a change to this entry matters (the folder's own name always does). */
  relevant: (fileName: string) => boolean;
  /** Called once the changes have settled (`change`), or to look at a lost folder again (`retry`). */
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
  /** One watcher per subfolder, by its path in the folder: `fs.watch` is not recursive on every platform. */
  private readonly subWatchers = new Map<string, FSWatcher>();
  /** `dev:ino` of the folder followed now. */
  private followedId: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private firstPendingChange = 0;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly options: FolderWatcherOptions,
  ) {}

  /** The folder now at the path is `id` (`dev:ino`): follow it, unless it is the one followed already. */
  follow(id: string): void {
    if (this.closed || this.followedId === id) return;
    this.unwatch();
    const own = basename(this.dir);
    try {
      this.watcher = watch(this.dir, { persistent: false }, (_event, fileName) => {
        // The folder's own name: the folder itself was moved or removed.
        // A name without a dot is most likely a subfolder made or removed.
        if (
          fileName === null ||
          this.options.relevant(String(fileName)) ||
          String(fileName) === own ||
          !String(fileName).includes('.')
        )
          this.changed();
      });
    } catch (error) {
      this.options.log.warn('cannot watch the commands folder; looking again in a second', {
        dir: this.dir,
        error: describeError(error),
      });
      this.lost();
      return;
    }
    this.followedId = id;
    this.watcher.on('error', (error) => {
      this.options.log.warn('watching the commands folder stopped; looking again in a second', {
        dir: this.dir,
        error: describeError(error),
      });
      this.lost();
    });
  }

  /**
   * Watches these subfolders too (paths within the folder), and no others: called after each
   * read of the folder. A subfolder made or removed shows as a change of its parent.
   */
  followSubfolders(paths: readonly string[]): void {
    if (this.closed) return;
    const wanted = new Set(paths);
    for (const [path, watcher] of this.subWatchers) {
      if (wanted.has(path)) continue;
      watcher.close();
      this.subWatchers.delete(path);
    }
    for (const path of wanted) {
      if (this.subWatchers.has(path)) continue;
      try {
        const watcher = watch(join(this.dir, path), { persistent: false }, (_event, fileName) => {
          if (fileName === null || this.options.relevant(String(fileName)) || !String(fileName).includes('.'))
            this.changed();
        });
        watcher.on('error', () => {
          watcher.close();
          this.subWatchers.delete(path);
          this.changed(); // gone, most likely: the next read says what is there
        });
        this.subWatchers.set(path, watcher);
      } catch {
        // Gone since it was listed: the next read no longer lists it.
      }
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
    this.watcher?.close();
    this.watcher = undefined;
    this.followedId = undefined;
    for (const watcher of this.subWatchers.values()) watcher.close();
    this.subWatchers.clear();
  }
}
