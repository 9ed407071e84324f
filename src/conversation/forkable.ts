/**
 * CMD-37: what `/fork [n]` copies into its new task. Pure: the runtime reads the task and
 * stores the copy.
 */
import { Role, type Message } from '@a2a-js/sdk';
import { isCommandExchange } from '../commands/index.js';
import { compactionOf, NOTICE_KEY } from '../wire.js';
import { entriesOf } from './build.js';
import { visibleHistory } from './visible.js';

/** The user messages the points are counted by: said in the conversation, not commands or the harness's notices. */
export function isConversationRequest(message: Message): boolean {
  return message.role === Role.ROLE_USER && !isCommandExchange(message) && message.metadata?.[NOTICE_KEY] === undefined;
}

/**
 * The task's own conversation up to point `n` (just before its n-th newest visible user
 * message, 1 = the newest), or all of it without `n`; `at` is the message the point is before.
 * Undefined when the task has fewer than `n` such messages.
 */
export function forkable(history: readonly Message[], n?: number): { messages: Message[]; at?: Message } | undefined {
  const visible = visibleHistory(history);
  if (n === undefined) return { messages: [...visible] };
  let seen = 0;
  for (let i = visible.length - 1; i >= 0; i -= 1) {
    if (!isConversationRequest(visible[i]!)) continue;
    seen += 1;
    if (seen === n) return { messages: visible.slice(0, i), at: visible[i] };
  }
  return undefined;
}

/**
 * Of a conversation (the earlier tasks of the context, then the task's), the messages a copy
 * keeps so that its next turn sends what this one's would: those the model reads, every
 * compaction point, and the message the latest point's summary covers up to, whatever it is.
 * Command exchanges, the harness's notices and rewind marks are left out (rewound messages too).
 */
export function conversationCopy(history: readonly Message[]): Message[] {
  const visible = visibleHistory(history);
  const read = new Set(entriesOf(visible).map((entry) => entry.message));
  const latest = visible.findLast((message) => compactionOf(message) !== undefined);
  const upTo = latest && compactionOf(latest)!.upTo;
  return visible.filter(
    (message) => read.has(message) || compactionOf(message) !== undefined || message.messageId === upTo,
  );
}
