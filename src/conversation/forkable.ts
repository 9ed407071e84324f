/**
 * CMD-37: what `/fork [n]` copies into its new task. Pure: the runtime reads the task and
 * stores the copy.
 */
import type { Message } from '@a2a-js/sdk';
import { compactionOf } from '../wire.js';
import { entriesOf } from './build.js';
import { rewindPoints } from './rewind-points.js';
import { visibleHistory } from './visible.js';

/**
 * The task's own conversation up to point `n` (as `/rewind` numbers points), or all of it
 * without `n`; `at` is the message the point is before. Undefined when there is no point `n`.
 */
export function forkable(history: readonly Message[], n?: number): { messages: Message[]; at?: Message } | undefined {
  const visible = visibleHistory(history);
  if (n === undefined) return { messages: [...visible] };
  const point = rewindPoints(history).find((p) => p.n === n);
  return point && { messages: visible.slice(0, point.index), at: visible[point.index] };
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
