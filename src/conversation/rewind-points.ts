/**
 * CMD-37: the points a conversation can be taken back to, and what taking it back hides.
 * Point n is just before the n-th newest visible user message that is a conversation message
 * (not a command message); 1 is the newest. `/rewind`, `/fork` and the `rollback` way of
 * double-texting all number points this way.
 */
import { Role, type Message } from '@a2a-js/sdk';
import { isCommandExchange } from '../commands/index.js';
import { NOTICE_KEY, REWIND_KEY, textOf, textPart, type RewindMark } from '../wire.js';
import { visibleHistory } from './visible.js';

/** The most points a listing shows. */
export const MAX_LISTED_POINTS = 20;
/** The most characters of a point's preview. */
export const PREVIEW_CHARS = 80;

export interface RewindPoint {
  /** 1 for the newest user message. */
  n: number;
  messageId: string;
  /** The message's first line, at most `PREVIEW_CHARS` characters. */
  preview: string;
  /** The message's whole text. */
  text: string;
  /** Where the message is in the visible history. */
  index: number;
}

/** The user messages the points are counted by: said in the conversation, not commands or the harness's notices. */
export function isConversationRequest(message: Message): boolean {
  return message.role === Role.ROLE_USER && !isCommandExchange(message) && message.metadata?.[NOTICE_KEY] === undefined;
}

/** The points of the history as it stands (rewound messages left out), newest first. */
export function rewindPoints(history: readonly Message[]): RewindPoint[] {
  const visible = visibleHistory(history);
  const points: RewindPoint[] = [];
  for (let index = visible.length - 1; index >= 0; index -= 1) {
    const message = visible[index]!;
    if (!isConversationRequest(message)) continue;
    const text = textOf(message.parts);
    points.push({ n: points.length + 1, messageId: message.messageId, preview: previewOf(text), text, index });
  }
  return points;
}

/**
 * What taking the conversation back to point n hides: the point's message and every visible
 * message after it, command exchanges included, in history order. Undefined when there is no
 * point n.
 */
export function hiddenFrom(
  history: readonly Message[],
  n: number,
): { point: RewindPoint; hidden: string[] } | undefined {
  const point = rewindPoints(history).find((p) => p.n === n);
  if (!point) return undefined;
  const hidden = visibleHistory(history)
    .slice(point.index)
    .map((message) => message.messageId);
  return { point, hidden };
}

/** A message's first line, cut to `PREVIEW_CHARS` characters with an ellipsis. */
export function previewOf(text: string): string {
  const line = text.trim().split('\n')[0]!.trim();
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS - 1)}…` : line;
}

/**
 * The rewind mark that hides `hidden` (an agent message stored after them): its text says where
 * the conversation was taken back to, its metadata the mark (`REWIND_KEY`).
 */
export function rewindMarkMessage(
  ids: { messageId: string; taskId: string; contextId: string },
  point: RewindPoint,
  hidden: readonly string[],
): Message {
  const mark: RewindMark = { to: point.messageId, hidden: [...hidden] };
  return {
    messageId: ids.messageId,
    taskId: ids.taskId,
    contextId: ids.contextId,
    role: Role.ROLE_AGENT,
    parts: [textPart(`Rewound to before "${point.preview}"`)],
    metadata: { [REWIND_KEY]: mark },
    extensions: [],
    referenceTaskIds: [],
  };
}
