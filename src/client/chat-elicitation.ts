/**
 * A tool call's question to the user in the terminal chat (MCP elicitation, issue 39): when a
 * turn pauses on a form, the chat offers `[a] answer  [d] decline  [c] cancel`, then reads each
 * field on a line of its own (strings, numbers, booleans as y/n, enums by their value), and
 * sends the answer as the message the wire defines (`elicitationAnswerPart`). A link's question
 * needs nothing of it: the person opens the URL and types "done". Any other key leaves the
 * prompt for typing.
 */
import type { Part } from '@a2a-js/sdk';
import { elicitationAnswerPart, type ElicitationAction, type ElicitationData } from '../elicitations.js';
import type { ChatInput } from './chat-prompt.js';

/** The line of keys under a form's question. */
export const QUESTION_KEYS_LINE = '[a] answer  [d] decline  [c] cancel';

const ACTIONS: Record<string, ElicitationAction> = { a: 'accept', d: 'decline', c: 'cancel' };

type Field = { type?: string; enum?: unknown[]; description?: string; title?: string };

/** The answer's part, from keys and lines typed; undefined when the person left to type instead. */
export async function answerForm(input: ChatInput, question: ElicitationData): Promise<Part | undefined> {
  const key = await input.pressKey(
    [`${question.server} asks: ${question.message}`, QUESTION_KEYS_LINE],
    ['a', 'd', 'c'],
  );
  const action = key === undefined ? undefined : ACTIONS[key];
  if (!action) return undefined;
  if (action !== 'accept') return elicitationAnswerPart({ elicitation: question.id, action });
  const properties = (question.schema?.properties ?? {}) as Record<string, Field>;
  const required = new Set((question.schema?.required as string[] | undefined) ?? []);
  const content: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(properties)) {
    for (;;) {
      const line = await input.askLine(fieldPrompt(name, field, required.has(name)));
      if (line === undefined) return undefined;
      if (line.trim() === '' && !required.has(name)) break;
      const value = parseField(line.trim(), field);
      if (value !== undefined) {
        content[name] = value;
        break;
      }
    }
  }
  return elicitationAnswerPart({ elicitation: question.id, action, content });
}

/** `name (number, required): `, `color (red/green): `, `admin (y/n): `. */
function fieldPrompt(name: string, field: Field, required: boolean): string {
  const kind = Array.isArray(field.enum)
    ? field.enum.map(String).join('/')
    : field.type === 'boolean'
      ? 'y/n'
      : (field.type ?? 'text');
  const about = field.description ?? field.title;
  return `${name}${about ? ` – ${about}` : ''} (${kind}${required ? ', required' : ''}): `;
}

/** The value typed for a field, or undefined when it does not parse (the field is asked again). */
export function parseField(text: string, field: Field): unknown {
  if (Array.isArray(field.enum)) return field.enum.find((choice) => String(choice) === text);
  if (field.type === 'boolean')
    return /^(y|yes|true)$/i.test(text) ? true : /^(n|no|false)$/i.test(text) ? false : undefined;
  if (field.type === 'number' || field.type === 'integer') {
    const value = Number(text);
    return text !== '' && Number.isFinite(value) && (field.type === 'number' || Number.isInteger(value))
      ? value
      : undefined;
  }
  return text;
}
