import { randomUUID } from 'node:crypto';
import type { Message, Task } from '@a2a-js/sdk';
import type { ConversationPoint, ConversationRewinds } from '../commands/index.js';
import { hiddenFrom, rewindMarkMessage, rewindPoints, type RewindPoint } from '../conversation/rewind-points.js';

/** The rewind points and marks of `src/conversation/rewind-points.ts`, as `/rewind` and `rollback` use them (CMD-37). */
export const conversationRewinds: ConversationRewinds = {
  points: (history) => rewindPoints(history).map(asPoint),
  rewind: (task, n) => rewindTo(task, n),
};

/** Taking `task` back to point n: the point, what it hides, and a new rewind mark saying so; undefined without point n. */
export function rewindTo(
  task: Pick<Task, 'id' | 'contextId' | 'history'>,
  n: number,
): { point: ConversationPoint; hidden: string[]; mark: Message } | undefined {
  const found = hiddenFrom(task.history, n);
  if (!found) return undefined;
  const mark = rewindMarkMessage(
    { messageId: randomUUID(), taskId: task.id, contextId: task.contextId },
    found.point,
    found.hidden,
  );
  return { point: asPoint(found.point), hidden: found.hidden, mark };
}

function asPoint({ n, messageId, preview, text }: RewindPoint): ConversationPoint {
  return { n, messageId, preview, text };
}
