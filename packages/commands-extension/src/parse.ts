import type { Message } from '@a2a-js/sdk';
import { splitCommandText } from './wire.js';

/** A command message split into its name and arguments (CMD-1). */
export interface ParsedCommand {
  name: string;
  args: string;
}

/**
 * Reads a message as a command when it is one (CMD-1 to CMD-3): exactly one part, a text
 * part, whose text (trailing white space removed) is `/<name>` or `/<name> <arguments>` for a
 * name `isRegistered` accepts. Anything else is an ordinary message and returns `undefined`.
 */
export function parseCommand(message: Message, isRegistered: (name: string) => boolean): ParsedCommand | undefined {
  const parts = message.parts ?? [];
  if (parts.length !== 1) return undefined;
  const content = parts[0]?.content;
  if (content?.$case !== 'text') return undefined;
  return parseCommandText(content.value, isRegistered);
}

/** The text half of {@link parseCommand}, for clients that complete commands as the user types. */
export function parseCommandText(text: string, isRegistered: (name: string) => boolean): ParsedCommand | undefined {
  const command = splitCommandText(text);
  return command && isRegistered(command.name) ? command : undefined;
}
