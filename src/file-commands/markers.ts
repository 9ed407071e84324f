/**
 * Claude Code's markers in a command file (CMD-38): `` !`cmd` `` is replaced by the output of a
 * shell command, `@path` by the text of a file, both from the workspace folder and only as far as
 * the file and the configuration grant (TOOL-6). Markers are found in the file's own text, never
 * in the arguments put into it: nothing a user types is run or read.
 *
 * Every marker is checked before any runs: a command with one marker refused runs nothing.
 */
import { readFile, stat } from 'node:fs/promises';
import { CommandUsageError } from '../commands/index.js';
import { WorkspaceRefusal, WorkspaceRoot } from '../tools/workspace-root.js';
import { runShell, shellAllowed, simpleWords } from '../tools/workspace-shell.js';
import { expandTemplate } from './template.js';

/** `` !`cmd` ``: a shell command on one line. */
const SHELL_MARKER = /!`([^`\n]+)`/g;

/**
 * `@path` at the start of a word, the path holding a `/` or a `.` (Claude Code's rule, narrowed):
 * `me@example.com` (not a word start) and `@alice` (no path) stay as they are.
 */
const FILE_MARKER = /(^|\s)@([^\s`]+)/g;

/** Punctuation after a path that belongs to the sentence: `see @README.md.` */
const TRAILING = /[.,;:!?)\]'"]+$/;

/** The most characters one `@path` may insert. */
export const MAX_INSERTED_FILE_CHARS = 100_000;

export type Segment =
  { kind: 'text'; text: string } | { kind: 'shell'; command: string } | { kind: 'file'; path: string };

/** The template cut into its text and its markers, in order. */
export function segmentsOf(template: string): Segment[] {
  const segments: Segment[] = [];
  let at = 0;
  for (const match of template.matchAll(SHELL_MARKER)) {
    segments.push(...fileSegments(template.slice(at, match.index)));
    segments.push({ kind: 'shell', command: match[1]!.trim() });
    at = match.index + match[0].length;
  }
  segments.push(...fileSegments(template.slice(at)));
  return segments.filter((segment) => segment.kind !== 'text' || segment.text !== '');
}

function fileSegments(text: string): Segment[] {
  const segments: Segment[] = [];
  let at = 0;
  for (const match of text.matchAll(FILE_MARKER)) {
    const token = match[2]!;
    const path = token.replace(TRAILING, '');
    if (!/[./]/.test(path)) continue;
    const start = match.index + match[1]!.length;
    segments.push({ kind: 'text', text: text.slice(at, start) }, { kind: 'file', path });
    at = start + 1 + path.length;
  }
  segments.push({ kind: 'text', text: text.slice(at) });
  return segments;
}

/** The template's text without its markers and placeholders: what a description may be made of. */
export function withoutMarkers(line: string): string {
  return segmentsOf(line)
    .map((segment) => (segment.kind === 'text' ? segment.text.replace(/\$(ARGUMENTS|[1-9])/g, '') : ''))
    .join('');
}

/** What the configuration grants command files' markers. */
export interface MarkerGrants {
  /** The workspace folder (`workspace.root`); none: markers are refused. */
  root?: string;
  /** `commands.allowShell`: whether `` !`cmd` `` may run at all. */
  allowShell: boolean;
  /** The workspace shell's bounds (`workspace.shell`). */
  timeoutMs: number;
  maxOutputChars: number;
  env: Readonly<Record<string, string | undefined>>;
}

/** The command file a prompt comes from, as a refusal names it. */
export interface MarkerSource {
  label: string;
  fileName: string;
  allowedTools?: readonly string[];
}

/**
 * The prompt: the template's text with the arguments put in, each marker replaced by what it
 * stands for. Throws `CommandUsageError` naming every marker refused, before anything runs.
 */
export async function expandMarkers(
  template: string,
  args: string,
  source: MarkerSource,
  grants: MarkerGrants | undefined,
): Promise<string> {
  const segments = segmentsOf(template);
  if (segments.every((segment) => segment.kind === 'text')) return expandTemplate(template, args);
  const problems: string[] = [];
  const root = grants?.root === undefined ? undefined : await openRoot(grants.root, problems);
  if (grants?.root === undefined)
    problems.push('no workspace folder is configured (workspace.root), which markers read and run in');
  // Only its `Bash(...)` rules can grant a command; the others name tools.
  const rules = source.allowedTools ?? [];
  const files = new Map<string, string>();
  for (const segment of segments) {
    if (segment.kind === 'shell') {
      const marker = `!\`${segment.command}\``;
      if (!grants?.allowShell) problems.push(`${marker} needs commands.allowShell on in the configuration`);
      if (!shellAllowed(rules, segment.command))
        problems.push(`${marker} needs ${ruleFor(segment.command)} in ${source.fileName}'s allowed-tools`);
    } else if (segment.kind === 'file' && root && !files.has(segment.path)) {
      const read = await readInserted(root, segment.path);
      if (typeof read === 'string') files.set(segment.path, read);
      else problems.push(`@${segment.path}: ${read.problem}`);
    }
  }
  if (problems.length > 0)
    throw new CommandUsageError(
      `${source.label} was not run, and nothing of it ran (CMD-38, TOOL-6): ${[...new Set(problems)].join('; ')}.`,
    );
  const parts: string[] = [];
  for (const segment of segments) {
    if (segment.kind === 'text') parts.push(expandTemplate(segment.text, args));
    else if (segment.kind === 'file') parts.push(files.get(segment.path)!);
    else parts.push(await shellOutput(segment.command, root!, grants!));
  }
  return parts.join('');
}

async function openRoot(root: string, problems: string[]): Promise<WorkspaceRoot | undefined> {
  try {
    return await WorkspaceRoot.open(root);
  } catch {
    problems.push('the workspace folder cannot be opened');
    return undefined;
  }
}

/** The rule that would grant a command: `Bash(<program>:*)` for its first word. */
function ruleFor(command: string): string {
  const words = simpleWords(command);
  return words ? `"Bash(${words[0]}:*)"` : 'a "Bash(...)" rule (and words only: no quotes, pipes or ";")';
}

/** A file's text from the workspace, or why not (missing, outside, too large, not text). */
async function readInserted(root: WorkspaceRoot, path: string): Promise<string | { problem: string }> {
  try {
    const real = await root.existing(path);
    const info = await stat(real);
    if (!info.isFile()) return { problem: 'not a file in the workspace folder' };
    if (info.size > MAX_INSERTED_FILE_CHARS * 4)
      return { problem: `larger than ${MAX_INSERTED_FILE_CHARS.toLocaleString('en-US')} characters` };
    const bytes = await readFile(real);
    if (bytes.includes(0)) return { problem: 'not a text file' };
    const text = bytes.toString('utf8');
    if (text.length > MAX_INSERTED_FILE_CHARS)
      return { problem: `larger than ${MAX_INSERTED_FILE_CHARS.toLocaleString('en-US')} characters` };
    return text;
  } catch (error) {
    if (!(error instanceof WorkspaceRefusal)) return { problem: 'cannot be read' };
    return {
      problem: /does not exist/.test(error.message)
        ? 'no such file in the workspace folder'
        : 'outside the workspace folder',
    };
  }
}

/** The command's output, as the workspace's `shell` tool runs it; a success's `[exit code 0]` left out. */
async function shellOutput(command: string, root: WorkspaceRoot, grants: MarkerGrants): Promise<string> {
  const { output, ok } = await runShell(
    command,
    { cwd: root.real, allow: [], timeoutMs: grants.timeoutMs, maxOutputChars: grants.maxOutputChars, env: grants.env },
    new AbortController().signal,
  );
  return ok ? output.replace(/\n?\[exit code 0\]$/, '') : output;
}
