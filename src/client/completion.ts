/**
 * Tab completion of slash commands from the card: `/` and Tab lists every command with its
 * argument hint and description; a prefix that only one command has completes to `/name `;
 * a prefix several share completes as far as they agree. An agent without the Commands
 * extension has no commands, so nothing completes.
 */
import type { CardCommand } from './connect.js';

export interface Completion {
  /** What readline should insert or offer, as its completer returns it. */
  completions: string[];
  /** Lines to show under the prompt when the prefix is ambiguous. */
  list: string[];
}

const NONE: Completion = { completions: [], list: [] };

/** `/name hint — description`, cut to `width` columns when given. */
export function describeCommand(command: CardCommand, width?: number): string {
  const head = `/${command.name}${command.argumentHint ? ` ${command.argumentHint}` : ''}`;
  const line = command.description ? `${head} — ${command.description}` : head;
  if (width === undefined || width < 20 || line.length <= width) return line;
  return `${line.slice(0, width - 1)}…`;
}

function commonPrefix(words: string[]): string {
  let prefix = words[0] ?? '';
  for (const word of words) {
    while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  }
  return prefix;
}

/** What Tab does on `line` (the text left of the cursor). */
export function completeCommand(line: string, commands: readonly CardCommand[], width?: number): Completion {
  if (!line.startsWith('/') || /\s/.test(line)) return NONE;
  const typed = line.slice(1);
  const matches = commands.filter((c) => c.name.startsWith(typed));
  if (matches.length === 0) return NONE;
  if (matches.length === 1) return { completions: [`/${matches[0]!.name} `], list: [] };
  const shared = commonPrefix(matches.map((c) => c.name));
  if (shared.length > typed.length) return { completions: [`/${shared}`], list: [] };
  return { completions: [], list: matches.map((c) => describeCommand(c, width)) };
}
