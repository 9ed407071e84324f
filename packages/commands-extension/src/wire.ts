/**
 * The extension's wire vocabulary: the names and shapes of the Commands extension v1 and the
 * command-arguments extension v1 that servers and clients must spell the same way. It depends
 * on the SDK's types only, never on Node, so a web page can bundle it
 * (`@tiny-harness/commands-extension/wire`).
 */
import { TaskState, type Message, type Part } from '@a2a-js/sdk';

/** The Commands extension v1 (spec/commands-extension-v1.md): its card entry and replies name it. */
export const COMMANDS_EXTENSION_URI = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/commands/v1';

/**
 * The command-arguments extension v1 (spec/command-arguments-extension-v1.md): beside the
 * commands entry on the card, the values a command's arguments can take, for completion.
 */
export const COMMAND_ARGUMENTS_EXTENSION_URI =
  'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/command-arguments/v1';

/** One value an argument can take, as the command-arguments extension lists it. */
export interface ArgumentValue {
  /** The value as it is typed. */
  value: string;
  /** What choosing it does, for a completion menu. */
  description?: string;
}

/** The values of one argument of one command (`position` counts words after the name, from 0). */
export interface ArgumentValues {
  /** The command's name, without the slash. */
  command: string;
  /** Which argument: 0 is the first word after the name. */
  position: number;
  /** The values it can take. */
  values: ArgumentValue[];
}

/**
 * The argument values a card lists under the command-arguments extension, by command name, by
 * position; empty when the card has no such entry or a malformed one. Clients complete from it.
 */
export function argumentValuesOf(
  extensions: readonly { uri: string; params?: Record<string, unknown> }[] | undefined,
): Map<string, ArgumentValue[][]> {
  const found = new Map<string, ArgumentValue[][]>();
  const listed = extensions?.find((extension) => extension.uri === COMMAND_ARGUMENTS_EXTENSION_URI)?.params?.arguments;
  if (!Array.isArray(listed)) return found;
  for (const entry of listed as Partial<ArgumentValues>[]) {
    if (typeof entry?.command !== 'string' || !Number.isInteger(entry.position) || !Array.isArray(entry.values))
      continue;
    const values = entry.values.filter((v): v is ArgumentValue => typeof v?.value === 'string' && v.value !== '');
    const positions = found.get(entry.command) ?? [];
    positions[entry.position!] = values;
    found.set(entry.command, positions);
  }
  return found;
}

/** Metadata key naming the command a reply answers (CMD-4, CMD-5). */
export const COMMAND_KEY = 'command';

/**
 * Key of a command reply's data part saying the command failed, with a code (`command_usage`,
 * `command_failed`, `model_unknown`); the reply's text says what went wrong (CMD-12).
 */
export const REPLY_ERROR_KEY = 'error';

/** The error code a command reply's data part carries, if the command failed. */
export function commandReplyError(message: Message | undefined): string | undefined {
  for (const part of message?.parts ?? []) {
    const code = part.content?.$case === 'data' ? part.content.value[REPLY_ERROR_KEY] : undefined;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** Metadata key holding the id of the task a command created or refers to (CMD-4, CMD-30). */
export const TASK_REF_KEY = 'task_ref';

/** A command's name (CMD-1): lower-case letters, digits and "-", starting with a letter. */
export const COMMAND_NAME_PATTERN = /^[a-z][a-z0-9-]*$/;

/**
 * A command message's text (CMD-1 to CMD-3): `/<name>`, or `/<name>` then spaces or tabs and
 * the arguments. Trailing white space is removed before matching; a newline right after the
 * name makes the text an ordinary message.
 */
const COMMAND_TEXT_PATTERN = new RegExp(`^/(${COMMAND_NAME_PATTERN.source.slice(1, -1)})(?:[ \\t]+([\\s\\S]*))?$`);

/** The name and arguments of a text shaped like a command, whether or not the name is registered. */
export function splitCommandText(text: string): { name: string; args: string } | undefined {
  const match = COMMAND_TEXT_PATTERN.exec(text.trimEnd());
  return match ? { name: match[1]!, args: (match[2] ?? '').trim() } : undefined;
}

/** A plain-text part. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: {} };
}

/** A JSON data part. */
export function dataPart(data: Record<string, unknown>): Part {
  return { content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '', metadata: {} };
}

const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** Completed, failed, canceled and rejected tasks take no more messages (CMD-11). */
export function isTerminal(state: TaskState | undefined): boolean {
  return state !== undefined && TERMINAL_STATES.has(state);
}
