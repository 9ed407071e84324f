/**
 * What the page keeps in the browser across a reload: the conversation it shows (its task, its
 * context, the reply artifact streaming), so a reload goes on where it was.
 */

/** Where the page keeps the conversation across a reload. */
const STORED_CONVERSATION = 'tiny-harness/conversation';

export interface StoredConversation {
  taskId?: string;
  contextId?: string;
  /** The artifact of the reply streaming when the page was left: a reload mid-turn shows it whole. */
  replyArtifact?: string;
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
    return stored && typeof stored === 'object' ? (stored as StoredConversation) : undefined;
  } catch {
    return undefined;
  }
}
