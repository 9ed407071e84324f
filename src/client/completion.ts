/**
 * Completing slash commands from the card. While a command's name is typed, the menu under the
 * prompt lists the commands it matches, with their argument hints and descriptions; Tab
 * completes a prefix that only one command has to `/name `, and a prefix several share as far
 * as they agree. After the name, an argument completes the same way from the values the card
 * lists for it. An agent without the Commands extension has no commands, so nothing completes.
 */
import type { CardCommand } from './connect.js';
import { fit } from './text-width.js';
import { matchingValues, type ArgumentValue } from '../wire.js';

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
  return width === undefined || width < 20 ? line : fit(line, width);
}

function commonPrefix(words: string[]): string {
  let prefix = words[0] ?? '';
  for (const word of words) {
    while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  }
  return prefix;
}

/**
 * Tab after a command's name completes its argument from the values the card lists for that
 * position (the command-arguments extension): one match completes, several complete as far as
 * they agree or are listed.
 */
function completeArgument(line: string, commands: readonly CardCommand[], width?: number): Completion {
  const match = /^\/([a-z][a-z0-9-]*)[ \t]+(.*)$/.exec(line);
  const command = match && commands.find((c) => c.name === match[1]);
  if (!match || !command?.argumentValues) return NONE;
  const words = match[2]!.split(/[ \t]+/);
  const typed = words.at(-1)!;
  const values = command.argumentValues[words.length - 1];
  if (!values?.length) return NONE;
  const found = matchingValues(values, typed);
  const head = line.slice(0, line.length - typed.length);
  if (found.length === 0) return NONE;
  if (found.length === 1) return { completions: [`${head}${found[0]!.value} `], list: [] };
  const shared = commonPrefix(found.map((v) => v.value));
  if (shared.length > typed.length && found.every((v) => v.value.startsWith(typed)))
    return { completions: [`${head}${shared}`], list: [] };
  return { completions: [], list: found.map((v) => describeValue(v, width)) };
}

function describeValue(value: ArgumentValue, width?: number): string {
  const line = value.description ? `${value.value} — ${value.description}` : value.value;
  return width === undefined || width < 20 ? line : fit(line, width);
}

/** What Tab does on `line` (the text left of the cursor). */
export function completeCommand(line: string, commands: readonly CardCommand[], width?: number): Completion {
  if (!line.startsWith('/')) return NONE;
  if (/\s/.test(line)) return completeArgument(line, commands, width);
  const typed = line.slice(1);
  const matches = commands.filter((c) => c.name.startsWith(typed));
  if (matches.length === 0) return NONE;
  if (matches.length === 1) return { completions: [`/${matches[0]!.name} `], list: [] };
  const shared = commonPrefix(matches.map((c) => c.name));
  if (shared.length > typed.length) return { completions: [`/${shared}`], list: [] };
  return { completions: [], list: matches.map((c) => describeCommand(c, width)) };
}

/** How many lines the menu under the prompt takes at most. */
const MENU_LINES = 8;

/**
 * The menu under the prompt for what is typed: while a command's name is typed, the commands it
 * matches; after the name, the values its argument can take, else the command itself (its hint
 * says what comes next). Nothing for a message that is not a command.
 */
export function commandMenu(text: string, commands: readonly CardCommand[], width?: number): string[] {
  if (!text.startsWith('/') || text.includes('\n')) return [];
  const name = /^\/(\S*)$/.exec(text);
  let lines: string[];
  if (name) {
    lines = commands.filter((c) => c.name.startsWith(name[1]!)).map((c) => describeCommand(c, width));
  } else {
    const match = /^\/([a-z][a-z0-9-]*)[ \t]+(.*)$/.exec(text);
    const command = match && commands.find((c) => c.name === match[1]);
    if (!match || !command) return [];
    const words = match[2]!.split(/[ \t]+/);
    const values = command.argumentValues?.[words.length - 1] ?? [];
    const found = matchingValues(values, words.at(-1)!);
    lines = found.length > 0 ? found.map((v) => describeValue(v, width)) : [describeCommand(command, width)];
  }
  if (lines.length <= MENU_LINES) return lines;
  return [...lines.slice(0, MENU_LINES - 1), `… ${lines.length - MENU_LINES + 1} more (type to narrow)`];
}

/** What Tab turns `text` (left of the cursor) into; `undefined` when it completes nothing. */
export function tabCompletion(text: string, commands: readonly CardCommand[]): string | undefined {
  const { completions } = completeCommand(text, commands);
  return completions.length === 1 ? completions[0] : undefined;
}
