/**
 * Reads a commands folder: every `*.md` file directly in it (not in sub-folders) is a command
 * named after the file. A file that cannot be a command is reported with its path and the
 * reason, and skipped; the others still load. Hidden files (`.name.md`, editors' lock and
 * swap files) are ignored.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileCommand } from './file-command.js';
import { COMMAND_NAME_PATTERN } from '../wire.js';
import { parseCommandFile } from './front-matter.js';

export const COMMAND_FILE_EXTENSION = '.md';

export interface LoadCommandFilesOptions {
  /** Names a file may not take: the built-ins and other registered commands. */
  reservedNames?: Iterable<string>;
}

export interface LoadedCommandFiles {
  /** The commands that loaded, in file-name order (plain code-unit sort). */
  commands: FileCommand[];
  /** One line per skipped file: `<path>: <reason>`. */
  problems: string[];
}

/** Whether a directory entry is one the loader reads (or reports); events on others are noise. */
export function isCommandFileName(fileName: string): boolean {
  return fileName.endsWith(COMMAND_FILE_EXTENSION) && !fileName.startsWith('.');
}

/** Reads every command file of `dir`. Never throws: an unreadable folder is a problem too. */
export async function loadCommandFiles(dir: string, options: LoadCommandFilesOptions = {}): Promise<LoadedCommandFiles> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    return { commands: [], problems: [`${dir}: the commands folder cannot be read (${why(error)})`] };
  }
  const reserved = new Set(options.reservedNames ?? []);
  const fileNames = entries.filter(isCommandFileName).sort();
  const outcomes = await Promise.all(fileNames.map((fileName) => loadOne(dir, fileName, reserved)));

  const result: LoadedCommandFiles = { commands: [], problems: [] };
  for (const outcome of outcomes) {
    if (typeof outcome === 'string') result.problems.push(outcome);
    else if (outcome) result.commands.push(outcome);
  }
  return result;
}

/** One file: its command, the problem line, or nothing when it vanished meanwhile. */
async function loadOne(dir: string, fileName: string, reserved: ReadonlySet<string>): Promise<FileCommand | string | undefined> {
  const path = join(dir, fileName);
  const name = fileName.slice(0, -COMMAND_FILE_EXTENSION.length);
  if (!COMMAND_NAME_PATTERN.test(name)) {
    return `${path}: "${name}" is not a valid command name: it must match ^[a-z][a-z0-9-]*$ (lower-case letters, digits and "-", starting with a letter); rename the file`;
  }
  if (reserved.has(name)) {
    return `${path}: /${name} is already a built-in or registered command, which a file cannot replace; rename the file`;
  }
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    // Removed since the folder was listed (an editor saving by rename): it is simply gone.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !(await exists(path))) return undefined;
    return `${path}: cannot be read (${why(error)})`;
  }
  const parsed = parseCommandFile(text);
  if (!parsed.ok) return `${path}: ${parsed.reasons.join('; ')}`;
  return { name, path, fileName, ...parsed.content };
}

/** Whether the entry itself is there (a dangling link is there, and is reported). */
async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

function why(error: unknown): string {
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
    default:
      return code ?? (error instanceof Error ? error.message : String(error));
  }
}
