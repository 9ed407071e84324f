/**
 * `allowed-tools` (TOOL-3): which tools a turn may be offered, as a command file lists them:
 * a tool's name as the model sees it (`fs_read_text_file`), or `<server>:*` for every tool of a
 * server. Anything else (another harness's rule, such as Claude Code's `Bash(git add:*)`)
 * matches nothing.
 */
import type { ToolEntry } from './tool-box.js';

export function allowedBy(rules: readonly string[], entry: Pick<ToolEntry, 'name' | 'server'>): boolean {
  return rules.some((rule) => rule === entry.name || rule === `${entry.server}:*`);
}

/** The entries `rules` allow; all of them when there are no rules (`undefined`). */
export function allowedEntries<T extends Pick<ToolEntry, 'name' | 'server'>>(
  entries: readonly T[],
  rules: readonly string[] | undefined,
): T[] {
  return rules === undefined ? [...entries] : entries.filter((entry) => allowedBy(rules, entry));
}

/**
 * Whether `rules` may allow any tool of `server` (its tools unknown: it has not answered): a
 * `<server>:*` rule, or a name that starts with its prefix. All do when there are no rules.
 */
export function mayAllowServer(rules: readonly string[] | undefined, server: string): boolean {
  return rules === undefined || rules.some((rule) => rule === `${server}:*` || rule.startsWith(`${server}_`));
}
