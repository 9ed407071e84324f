/**
 * An MCP server's question to the user during a tool call (MCP elicitation), as the wire
 * carries it (spec/elicitation-extension-v1.md): the status message that pauses the turn holds
 * an {@link ElicitationData} part, and the user answers with a message holding an
 * {@link ElicitationAnswer} part. Shared by the harness, the terminal chat and the web page.
 */
import type { Message, Part } from '@a2a-js/sdk';
import { dataPart, NOTICE_KEY } from './wire.js';

/** The elicitation extension (spec/elicitation-extension-v1.md), declared on the card. */
export const ELICITATION_EXTENSION_URI = 'https://madarauchiha-314.github.io/tiny-harness/a2a/ext/elicitation/v1';

/** The notice kind of the status message that pauses a turn on a server's question. */
export const ELICITATION_NOTICE = 'elicitation';

/** The notice kind of the reply that records an answer to it. */
export const ELICITATION_ANSWER_NOTICE = 'elicitation-answer';

/** The notice kind of a WORKING status message: the question was answered, declined or dropped, and the call goes on. */
export const ELICITATION_ENDED_NOTICE = 'elicitation-ended';

/** What the user may answer. */
export type ElicitationAction = 'accept' | 'decline' | 'cancel';

/** A question as the pause's data part holds it, under the key `elicitationRequest`. */
export interface ElicitationData {
  /** The question's id: the answer names it. */
  id: string;
  /** `form`: fill in `schema`; `url`: open `url` (a sign-in), then say "done". */
  mode: 'form' | 'url';
  /** The server's words. */
  message: string;
  /** The MCP server's name in the config, and the call that asked. */
  server: string;
  tool: string;
  callId: string;
  /** Form mode: the JSON Schema of the answer's `content` (flat, of strings, numbers, booleans and enums). */
  schema?: Record<string, unknown>;
  /** URL mode: where the user goes. */
  url?: string;
}

/** An answer as a message's data part holds it. */
export interface ElicitationAnswer {
  elicitation: string;
  action: ElicitationAction;
  content?: Record<string, unknown>;
}

const ACTIONS: ReadonlySet<string> = new Set(['accept', 'decline', 'cancel']);

/** The question a status message asks, if it is a pause on one. */
export function elicitationOf(message: Message | undefined): ElicitationData | undefined {
  if (message?.metadata?.[NOTICE_KEY] !== ELICITATION_NOTICE) return undefined;
  for (const part of message.parts) {
    const value = dataOf(part)?.elicitationRequest as ElicitationData | undefined;
    if (value && typeof value.id === 'string') return value;
  }
  return undefined;
}

/** The answer a message's parts hold, if any; `malformed` when a part names a question but is not a valid answer. */
export function elicitationAnswerOf(
  parts: readonly Part[] | undefined,
): ElicitationAnswer | { malformed: string } | undefined {
  for (const part of parts ?? []) {
    const value = dataOf(part);
    if (!value || !('elicitation' in value)) continue;
    if (typeof value.elicitation !== 'string') return { malformed: '"elicitation" must be the question\'s id.' };
    if (typeof value.action !== 'string' || !ACTIONS.has(value.action))
      return { malformed: '"action" must be "accept", "decline" or "cancel".' };
    const content = value.content;
    if (content !== undefined && (typeof content !== 'object' || content === null || Array.isArray(content)))
      return { malformed: '"content" must be an object.' };
    return {
      elicitation: value.elicitation,
      action: value.action as ElicitationAction,
      ...(content === undefined ? {} : { content: content as Record<string, unknown> }),
    };
  }
  return undefined;
}

/** The data part of an answer. */
export function elicitationAnswerPart(answer: ElicitationAnswer): Part {
  return dataPart({ ...answer });
}

/** What a user sends to say a URL-mode question (a sign-in) is done. */
export function isDoneText(text: string): boolean {
  return text.trim().toLowerCase() === 'done';
}

function dataOf(part: Part): Record<string, unknown> | undefined {
  const value = part.content?.$case === 'data' ? part.content.value : undefined;
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
