import type { Message } from '@a2a-js/sdk';
import { rewindOf } from '../wire.js';

/**
 * The history as the conversation stands (CMD-37): without the messages a rewind mark hid. A
 * mark hides only messages before it, so what was said after a rewind stays even when it
 * reuses an id. The marks themselves stay: they say where the conversation was taken back.
 * Returns the very array when nothing was rewound, so the common case costs one pass.
 */
export function visibleHistory<T extends Pick<Message, 'messageId' | 'metadata'>>(history: readonly T[]): T[] {
  let hidden: Map<string, number> | undefined;
  for (let i = 0; i < history.length; i += 1) {
    const mark = rewindOf(history[i]!);
    if (!mark) continue;
    hidden ??= new Map();
    // Each id is hidden up to the newest mark that names it.
    for (const id of mark.hidden) hidden.set(id, i);
  }
  if (!hidden) return history as T[];
  return history.filter((message, i) => {
    const until = hidden.get(message.messageId);
    return until === undefined || i > until;
  });
}
