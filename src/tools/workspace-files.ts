/**
 * What the built-in file tools do (docs/workspace.md): read, list, search (a glob with
 * tinyglobby, a regular expression over each file), write and edit. Every path goes through
 * {@link WorkspaceRoot} first (TOOL-6); a refusal or a failure throws an error whose message
 * the model reads.
 */
import { lstat, mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { glob } from 'tinyglobby';
import { WorkspaceRefusal, type WorkspaceRoot } from './workspace-root.js';

/** Files over this size are not read (nor searched): a workspace tool gives the model text, not data dumps. */
export const MAX_FILE_BYTES = 2 * 2 ** 20;
/** The most entries `list` names, and files `search` opens. */
export const MAX_LIST_ENTRIES = 1000;
export const MAX_SEARCH_FILES = 5000;
/** The most matching lines `search` reports, and the characters of each. */
export const MAX_SEARCH_MATCHES = 200;
const MAX_LINE_CHARS = 300;

/** A tool's input, as the model sent it, with the named fields checked; `why` if one is missing or of the wrong type. */
function field(input: unknown, name: string, kind: 'string' | 'boolean', optional = false): unknown {
  const value = input && typeof input === 'object' ? (input as Record<string, unknown>)[name] : undefined;
  if (value === undefined && optional) return undefined;
  if (typeof value !== kind) throw new WorkspaceRefusal(`The input needs "${name}", a ${kind}.`);
  return value;
}
const text = (input: unknown, name: string) => field(input, name, 'string') as string;
const maybeText = (input: unknown, name: string) => field(input, name, 'string', true) as string | undefined;

/** A file's text; refused for a folder, a file over {@link MAX_FILE_BYTES} or one that is not text. */
async function readText(root: WorkspaceRoot, path: string): Promise<{ real: string; content: string }> {
  const real = await root.existing(path);
  const info = await stat(real);
  if (!info.isFile()) throw new WorkspaceRefusal(`${JSON.stringify(path)} is not a file.`);
  if (info.size > MAX_FILE_BYTES)
    throw new WorkspaceRefusal(`${JSON.stringify(path)} is larger than ${MAX_FILE_BYTES} bytes.`);
  const bytes = await readFile(real);
  if (bytes.includes(0)) throw new WorkspaceRefusal(`${JSON.stringify(path)} is not a text file.`);
  return { real, content: bytes.toString('utf8') };
}

export async function readTool(root: WorkspaceRoot, input: unknown): Promise<string> {
  return (await readText(root, text(input, 'path'))).content;
}

/** A folder's entries, one a line, folders ending in `/` and symlinks in `@`, sorted. */
export async function listTool(root: WorkspaceRoot, input: unknown): Promise<string> {
  const path = maybeText(input, 'path') ?? '.';
  const real = await root.existing(path);
  if (!(await stat(real)).isDirectory()) throw new WorkspaceRefusal(`${JSON.stringify(path)} is not a folder.`);
  const entries = (await readdir(real, { withFileTypes: true }))
    .map((e) => `${e.name}${e.isDirectory() ? '/' : e.isSymbolicLink() ? '@' : ''}`)
    .sort();
  if (entries.length === 0) return `${root.shown(real)} is empty.`;
  const shown = entries.slice(0, MAX_LIST_ENTRIES).join('\n');
  return entries.length > MAX_LIST_ENTRIES
    ? `${shown}\n[${entries.length - MAX_LIST_ENTRIES} more entries not shown]`
    : shown;
}

/**
 * Lines matching a regular expression in the files under a folder (`path`, default the root)
 * whose paths match `glob` (default every file), as `file:line: text`. Symlinks are not
 * followed; `.git` and `node_modules` are skipped.
 */
export async function searchTool(root: WorkspaceRoot, input: unknown, signal: AbortSignal): Promise<string> {
  const pattern = text(input, 'pattern');
  let regex: RegExp;
  try {
    regex = new RegExp(pattern);
  } catch {
    throw new WorkspaceRefusal(`${JSON.stringify(pattern)} is not a valid regular expression.`);
  }
  const path = maybeText(input, 'path') ?? '.';
  const dir = await root.existing(path);
  if (!(await stat(dir)).isDirectory()) throw new WorkspaceRefusal(`${JSON.stringify(path)} is not a folder.`);
  const files = await glob(maybeText(input, 'glob') ?? '**/*', {
    cwd: dir,
    onlyFiles: true,
    followSymbolicLinks: false,
    ignore: ['**/.git/**', '**/node_modules/**'],
    signal,
  });
  const found: string[] = [];
  let more = false;
  for (const file of files.sort().slice(0, MAX_SEARCH_FILES)) {
    if (signal.aborted) break;
    const lines = await searchableLines(join(dir, file), root);
    for (const [index, line] of lines.entries()) {
      if (!regex.test(line)) continue;
      if (found.length === MAX_SEARCH_MATCHES) more = true;
      if (more) break;
      found.push(`${root.shown(join(dir, file))}:${index + 1}: ${line.slice(0, MAX_LINE_CHARS)}`);
    }
    if (more) break;
  }
  if (found.length === 0) return `No line matches ${JSON.stringify(pattern)}.`;
  return more ? `${found.join('\n')}\n[more matches not shown: narrow the search]` : found.join('\n');
}

/** The lines of a plain file inside the root, or none (a symlink, a large or binary file). */
async function searchableLines(file: string, root: WorkspaceRoot): Promise<string[]> {
  try {
    const info = await lstat(file);
    if (!info.isFile() || info.size > MAX_FILE_BYTES) return [];
    await root.existing(file);
    const handle = await open(file);
    try {
      const bytes = await handle.readFile();
      return bytes.includes(0) ? [] : bytes.toString('utf8').split('\n');
    } finally {
      await handle.close();
    }
  } catch {
    return [];
  }
}

/** Writes a whole file, creating it and its folders when needed. */
export async function writeTool(root: WorkspaceRoot, input: unknown): Promise<string> {
  const path = text(input, 'path');
  const content = text(input, 'content');
  const real = await root.writable(path);
  await mkdir(dirname(real), { recursive: true });
  await writeFile(real, content);
  return `Wrote ${content.length} characters to ${root.shown(real)}.`;
}

/** Replaces `old` with `new` in a file: `old` must occur once, or `all` be true. */
export async function editTool(root: WorkspaceRoot, input: unknown): Promise<string> {
  const path = text(input, 'path');
  const old = text(input, 'old');
  const replacement = text(input, 'new');
  const all = field(input, 'all', 'boolean', true) === true;
  if (old === '') throw new WorkspaceRefusal('"old" may not be empty.');
  const { real, content } = await readText(root, path);
  const count = content.split(old).length - 1;
  if (count === 0) throw new WorkspaceRefusal(`The text of "old" does not occur in ${JSON.stringify(path)}.`);
  if (count > 1 && !all)
    throw new WorkspaceRefusal(
      `The text of "old" occurs ${count} times in ${JSON.stringify(path)}: give more of it, or set "all".`,
    );
  await writeFile(real, content.split(old).join(replacement));
  return `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${root.shown(real)}.`;
}
