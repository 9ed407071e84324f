/**
 * What the page keeps in the browser across a reload: the conversation it shows (its task, its
 * context, the reply artifact streaming, the messages waiting in its queue), so a reload goes on
 * where it was.
 */

/** Where the page keeps the conversation across a reload. */
const STORED_CONVERSATION = 'tiny-harness/conversation';

export interface StoredConversation {
  taskId?: string;
  contextId?: string;
  /** The artifact of the reply streaming when the page was left: a reload mid-turn shows it whole. */
  replyArtifact?: string;
  /** Messages sent to the task's queue whose turn had not started: drawn again, and sent again with their ids. */
  queued?: QueuedMessage[];
}

export interface QueuedMessage {
  messageId: string;
  text: string;
}

function isQueuedMessage(value: unknown): value is QueuedMessage {
  const entry = value as Partial<QueuedMessage> | null;
  return typeof entry?.messageId === 'string' && typeof entry.text === 'string';
}

/** Keeps `conversation` for the next load; one with neither task nor context is forgotten. */
export function storeConversation(conversation: StoredConversation): void {
  try {
    if (conversation.taskId || conversation.contextId) {
      localStorage.setItem(STORED_CONVERSATION, JSON.stringify(conversation));
    } else {
      localStorage.removeItem(STORED_CONVERSATION);
    }
  } catch {
    // Storage refused (private mode, full): the page works, it just does not survive a reload.
  }
}

/** The conversation kept by the last load, if any. */
export function storedConversation(): StoredConversation | undefined {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(STORED_CONVERSATION) ?? 'null');
    if (!stored || typeof stored !== 'object') return undefined;
    const conversation = stored as StoredConversation;
    // Written by this page, but read defensively: an older page kept no queue.
    const queued = Array.isArray(conversation.queued) ? conversation.queued.filter(isQueuedMessage) : [];
    return { ...conversation, queued };
  } catch {
    return undefined;
  }
}
