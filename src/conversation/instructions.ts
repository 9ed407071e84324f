/**
 * The project's instruction files (config `instructions`), whose texts every turn sends after
 * the system prompt, in the configured order (CMD-36). They are read at start and again when
 * one changes, appears or goes: the folder of each is followed by the watcher the command files
 * use, its own entries only. A missing file is skipped; one over `maxChars`, or one that cannot
 * be read, is left out and said in the log once per change, with where it was looked for.
 * What users see (`/memory`, the model's request) names each file as configured, never more.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { FolderWatcher } from '../folder-watcher.js';
import { describeError, silentLogger, type Logger } from '../log.js';
import type { InstructionFileListing } from '../commands/index.js';
import type { InstructionFile } from './build.js';

export interface ProjectInstructionsOptions {
  /** The files as configured, in order; relative ones are read from `baseDir`. */
  paths: readonly string[];
  /** Default: the working directory when this is made, i.e. where the harness started. */
  baseDir?: string;
  /** The most characters one file may have; a larger one is refused. */
  maxChars: number;
  /** Each file's fate is said once per change: loaded and missing as info lines, the rest as warnings. */
  log?: Logger;
  /** Quiet time after the last change before the files are read again. Default 150 ms. */
  debounceMs?: number;
}

/** One reading of one file. */
type Reading =
  { status: 'loaded'; text: string } | { status: 'too-large'; chars: number } | { status: 'missing'; problem?: string };

interface Slot {
  /** As configured: what users and the model are shown. */
  path: string;
  /** Where it is read: the log may say so. */
  absolute: string;
  /** The last reading; none before the first. */
  reading: Reading | undefined;
}

export class ProjectInstructions {
  readonly maxChars: number;
  private readonly slots: Slot[];
  private readonly log: Logger;
  private readonly watchers = new Map<string, FolderWatcher>();
  /** Readings run one after another, so an older one never lands after a newer one. */
  private queue: Promise<void> = Promise.resolve();
  /** Those waiting for the next reading to end (`nextReading`). */
  private waiters: Array<() => void> = [];
  private closed = false;

  constructor(options: ProjectInstructionsOptions) {
    const baseDir = options.baseDir ?? process.cwd();
    this.maxChars = options.maxChars;
    this.log = options.log ?? silentLogger;
    this.slots = options.paths.map((path) => ({ path, absolute: resolve(baseDir, path), reading: undefined }));
    for (const dir of new Set(this.slots.map((slot) => dirname(slot.absolute)))) {
      const names = new Set(this.slots.filter((s) => dirname(s.absolute) === dir).map((s) => basename(s.absolute)));
      this.watchers.set(
        dir,
        new FolderWatcher(dir, {
          relevant: (name) => names.has(name),
          topLevelOnly: true,
          what: 'the folder of an instruction file',
          onChange: () => void this.reload(),
          debounceMs: options.debounceMs ?? 150,
          log: this.log,
        }),
      );
    }
  }

  /**
   * Reads every file, following their folders from now on; resolves once read. Never rejects:
   * what cannot be read is left out and logged. The watches do not keep the process alive.
   */
  start(): Promise<void> {
    return this.reload();
  }

  /** Reads every file again; resolves when done. */
  reload(): Promise<void> {
    const next = this.queue.then(() => this.readAll());
    this.queue = next.catch((error: unknown) =>
      this.log.error('reading the instruction files failed', { error: describeError(error) }),
    );
    return this.queue;
  }

  /** The files a turn sends now, in order: the loaded ones. */
  files(): InstructionFile[] {
    return this.slots.flatMap((slot) =>
      slot.reading?.status === 'loaded' ? [{ path: slot.path, text: slot.reading.text }] : [],
    );
  }

  /** Every configured file in order, as it stands now (`/memory`). */
  listing(): InstructionFileListing[] {
    return this.slots.map((slot) => listingOf(slot.path, slot.reading));
  }

  /** Resolves when the next reading of the files ends (at once when closed). */
  nextReading(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once `check` holds of the listing, waiting on the readings that changes cause. */
  async until(check: (files: InstructionFileListing[]) => boolean): Promise<void> {
    while (!check(this.listing()) && !this.closed) await this.nextReading();
  }

  /** Stops following the files; a reading under way ends without applying what it read. */
  async close(): Promise<void> {
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.settleWaiters();
    await this.queue;
  }

  private async readAll(): Promise<void> {
    if (this.closed) return;
    // Follow before reading, so that a change made during the reading is not missed.
    await Promise.all([...this.watchers].map(([dir, watcher]) => follow(dir, watcher)));
    const readings = await Promise.all(this.slots.map((slot) => readBounded(slot.absolute, this.maxChars)));
    if (this.closed) return;
    readings.forEach((reading, i) => this.apply(this.slots[i]!, reading));
    this.settleWaiters();
  }

  /** Keeps the reading and says what changed: nothing when nothing did. */
  private apply(slot: Slot, reading: Reading): void {
    const before = slot.reading;
    slot.reading = reading;
    if (before !== undefined && JSON.stringify(before) === JSON.stringify(reading)) return;
    const where = { file: slot.path };
    switch (reading.status) {
      case 'loaded':
        this.log.info(before?.status === 'loaded' ? 'instruction file read again' : 'instruction file loaded', {
          ...where,
          chars: reading.text.length,
        });
        return;
      case 'too-large':
        this.log.warn(
          `instruction file left out: ${reading.chars} characters, over the ${this.maxChars} allowed (instructionsMaxChars)`,
          where,
        );
        return;
      case 'missing':
        if (reading.problem) this.log.warn(`instruction file left out: ${reading.problem}`, where);
        // The default (AGENTS.md) is missing in most folders: not worth a line at every start.
        else this.log.debug('instruction file not found; skipped until it is made', where);
    }
  }

  private settleWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const settle of waiters) settle();
  }
}

function listingOf(path: string, reading: Reading | undefined): InstructionFileListing {
  switch (reading?.status) {
    case 'loaded':
      return { path, chars: reading.text.length, status: 'loaded' };
    case 'too-large':
      return { path, chars: reading.chars, status: 'too-large' };
    default:
      return { path, chars: 0, status: 'missing', ...(reading?.problem ? { problem: reading.problem } : {}) };
  }
}

/** Follows the folder now at `dir`, or, when there is none, looks again in a while (the watcher's own retry). */
async function follow(dir: string, watcher: FolderWatcher): Promise<void> {
  try {
    const stats = await stat(dir);
    if (stats.isDirectory()) return await watcher.follow(`${stats.dev}:${stats.ino}`);
  } catch {
    // Gone or unreadable: as when it is not a folder.
  }
  watcher.lost();
}

/**
 * Reads a file as UTF-8, keeping its text only while it fits `maxChars`: a file far too large
 * is counted to its end, never held whole.
 */
async function readBounded(path: string, maxChars: number): Promise<Reading> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  let chars = 0;
  try {
    // Only a plain file: opening a named pipe would wait for a writer, holding the readings up.
    const stats = await stat(path);
    if (!stats.isFile())
      return { status: 'missing', problem: stats.isDirectory() ? 'it is a folder' : 'it is not a plain file' };
    for await (const chunk of createReadStream(path)) {
      const piece = decoder.write(chunk as Buffer);
      chars += piece.length;
      if (chars <= maxChars) text += piece;
    }
  } catch (error) {
    return { status: 'missing', problem: whyUnreadable(error) };
  }
  const rest = decoder.end();
  chars += rest.length;
  return chars > maxChars ? { status: 'too-large', chars } : { status: 'loaded', text: text + rest };
}

/** Why a path gave no text, in a few words; none when there is simply no file there. */
function whyUnreadable(error: unknown): string | undefined {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return undefined;
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a folder';
    case 'ELOOP':
      return 'a loop of links';
    default:
      return 'it cannot be read';
  }
}

/** The instruction files a configuration names, read and followed from the folder the harness starts in. */
export async function startInstructions(
  config: { instructions: readonly string[]; instructionsMaxChars: number },
  log: Logger,
): Promise<ProjectInstructions> {
  const instructions = new ProjectInstructions({
    paths: config.instructions,
    maxChars: config.instructionsMaxChars,
    log,
  });
  await instructions.start();
  return instructions;
}
