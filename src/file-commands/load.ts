/**
 * Reads a commands folder: every `*.md` file in it or its subfolders (`frontend/review.md`) is a command
 * named after the file. A file that cannot be a command is reported with its path and the
 * reason, and skipped; the others still load. Hidden files (`.name.md`, editors' lock and
 * swap files) are ignored.
 *
 * Only regular files are opened, and never more than {@link MAX_COMMAND_FILE_BYTES} of one is
 * read: opening a named pipe for reading waits for a writer, which would hang the reload (and,
 * through libuv's small thread pool, every other file operation of the process), and a device
 * or a huge file would be read without end. A link to a regular file is followed.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { FileCommand } from './file-command.js';
import { COMMAND_NAME_PATTERN } from '../wire.js';

export const COMMAND_FILE_EXTENSION = '.md';

/** The largest command file read, in bytes (64 KiB): a prompt template, not a document. */
export const MAX_COMMAND_FILE_BYTES = 64 * 1024;

/** The most command files read from one folder, in file-name order; the card lists each one. */
export const MAX_COMMAND_FILES = 1000;

/** Files read at the same time: enough to overlap the disk, few enough to leave file handles and threads to the rest. */
const READ_CONCURRENCY = 8;

/**
 * Opened without waiting: a FIFO that slipped in between the check and the open (a race) is
 * opened at once and then refused on its type, instead of blocking until a writer comes.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

export interface LoadCommandFilesOptions {
  /** Names a file may not take: the built-ins and other registered commands. */
  reservedNames?: Iterable<string>;
  /** Stops reading more files once aborted (the caller has given up on this read). */
  signal?: AbortSignal;
}

export interface LoadedCommandFiles {
  /** The commands that loaded, in file-name order (plain code-unit sort). */
  commands: FileCommand[];
  /** One line per skipped file: `<path>: <reason>`. */
  problems: string[];
  /** Set when the folder itself could not be listed (then there are no commands): why, without the path. */
  folderProblem?: string;
  /** The subfolders read, relative to the folder (`frontend`, `frontend/forms`): where changes are watched for too. */
  folders?: string[];
}

/** Whether a directory entry is one the loader reads (or reports); events on others are noise. */
export function isCommandFileName(fileName: string): boolean {
  return fileName.endsWith(COMMAND_FILE_EXTENSION) && !fileName.startsWith('.');
}

/** Reads every command file of `dir`. Never throws: an unreadable folder is a problem too. */
export async function loadCommandFiles(
  dir: string,
  options: LoadCommandFilesOptions = {},
): Promise<LoadedCommandFiles> {
  let entries: string[];
  const folders: string[] = [];
  try {
    // Subfolders too (`frontend/review.md`), as Claude Code reads them; hidden ones are not.
    const found = await readdir(dir, { recursive: true, withFileTypes: true });
    entries = [];
    for (const entry of found) {
      const path = relative(dir, join(entry.parentPath, entry.name));
      if (path.split(sep).some((part) => part.startsWith('.'))) continue;
      if (entry.isDirectory()) folders.push(path);
      // A folder named like a command file is reported as not a regular file, as before.
      if (!entry.isDirectory() || isCommandFileName(entry.name)) entries.push(path);
    }
  } catch (error) {
    return {
      commands: [],
      problems: [`${dir}: the commands folder cannot be read (${whyUnreadable(error)})`],
      folderProblem: whyUnreadable(error),
    };
  }
  const reserved = new Set(options.reservedNames ?? []);
  const candidates = entries.filter((path) => isCommandFileName(basename(path))).sort();
  const result: LoadedCommandFiles = { commands: [], problems: [], folders: folders.sort() };
  if (candidates.length > MAX_COMMAND_FILES) {
    result.problems.push(
      `${dir}: the commands folder holds ${candidates.length} *.md files, more than the ${MAX_COMMAND_FILES} read; ` +
        `the ${candidates.length - MAX_COMMAND_FILES} after ${candidates[MAX_COMMAND_FILES - 1]} in file-name order are skipped`,
    );
  }
  const fileNames = candidates.slice(0, MAX_COMMAND_FILES);
  const outcomes = await mapWithConcurrency(fileNames, READ_CONCURRENCY, (fileName) =>
    options.signal?.aborted ? undefined : loadOne(dir, fileName, reserved),
  );
  // Two files of one name in different folders: the first in path order wins.
  const firstOf = new Map<string, FileCommand>();
  for (const outcome of outcomes) {
    if (typeof outcome === 'string') result.problems.push(outcome);
    else if (outcome && firstOf.has(outcome.name)) {
      result.problems.push(
        `${outcome.path}: /${outcome.name} comes from ${firstOf.get(outcome.name)!.fileName} already, first in path order; rename one of them`,
      );
    } else if (outcome) {
      firstOf.set(outcome.name, outcome);
      result.commands.push(outcome);
    }
  }
  return result;
}

/** One file: its command, the problem line, or nothing when it vanished meanwhile. */
async function loadOne(
  dir: string,
  fileName: string,
  reserved: ReadonlySet<string>,
): Promise<FileCommand | string | undefined> {
  const path = join(dir, fileName);
  const name = basename(fileName).slice(0, -COMMAND_FILE_EXTENSION.length);
  const folder = dirname(fileName) === '.' ? undefined : dirname(fileName);
  if (!COMMAND_NAME_PATTERN.test(name)) {
    return `${path}: "${name}" is not a valid command name: it must match ${COMMAND_NAME_PATTERN.source} (lower-case letters, digits and "-", starting with a letter); rename the file`;
  }
  if (reserved.has(name)) {
    return `${path}: /${name} is already a built-in or registered command, which a file cannot replace; rename the file`;
  }
  let text: string;
  try {
    const read = await readRegularFile(path);
    if (typeof read !== 'string') return `${path}: ${read.problem}`;
    text = read;
  } catch (error) {
    // Removed since the folder was listed (an editor saving by rename): it is simply gone.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !(await exists(path))) return undefined;
    return `${path}: cannot be read (${whyUnreadable(error)})`;
  }
  // Loaded with the first file: a folder without files never parses the YAML library.
  const { parseCommandFile } = await import('./front-matter.js');
  const parsed = parseCommandFile(text);
  if (!parsed.ok) return `${path}: ${parsed.reasons.join('; ')}`;
  // The folder shows in the description, as Claude Code shows it: "Review a component (frontend)".
  const own = parsed.content.description || `Command file ${basename(fileName)}`;
  const description = folder ? `${own} (${folder.split(sep).join('/')})` : own;
  return { name, path, fileName, ...parsed.content, description };
}

/**
 * The text of `path` when it is a regular file (or a link to one) of at most
 * {@link MAX_COMMAND_FILE_BYTES}; otherwise why not. The type and size are checked before the
 * file is opened, and again on the open handle, since the entry may change in between; the
 * read stops one byte past the bound, so a file that grows meanwhile is still refused.
 */
async function readRegularFile(path: string): Promise<string | { problem: string }> {
  const refusal = await notReadable(path, await stat(path));
  if (refusal) return { problem: refusal };
  const handle = await open(path, OPEN_FLAGS);
  try {
    const again = await notReadable(path, await handle.stat());
    if (again) return { problem: again };
    const buffer = Buffer.alloc(MAX_COMMAND_FILE_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > MAX_COMMAND_FILE_BYTES) return { problem: tooBig(`more than ${MAX_COMMAND_FILE_BYTES}`) };
    return buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
  }
}

/** Why a file with these stats is not read, or undefined when it is a regular file within the bound. */
async function notReadable(path: string, stats: Stats): Promise<string | undefined> {
  if (!stats.isFile()) {
    const linked = (await lstat(path).catch(() => undefined))?.isSymbolicLink() ? 'a link to ' : '';
    return `not a regular file (it is ${linked}${kindOf(stats)}); a command is a regular *.md file`;
  }
  if (stats.size > MAX_COMMAND_FILE_BYTES) return tooBig(String(stats.size));
  return undefined;
}

function tooBig(size: string): string {
  return `${size} bytes, over the limit of ${MAX_COMMAND_FILE_BYTES} bytes (64 KiB) for a command file; make the prompt shorter`;
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a file';
}

/** `work` on every item, at most `limit` at a time; the results in the items' order. */
async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R> | R,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Whether the entry itself is there (a dangling link is there, and is reported). */
async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** A file error as a phrase for a person, without the path. */
export function whyUnreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'it does not exist, or is a link to nothing';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'it is not a directory';
    case 'ELOOP':
      return 'a loop of links';
    default:
      return code ?? (error instanceof Error ? error.message : String(error));
  }
}
