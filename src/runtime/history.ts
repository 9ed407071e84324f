import { Role, type Message, type Part } from '@a2a-js/sdk';
import { isCommandExchange } from '../commands/index.js';
import type { ConversationMessage } from './model-gateway.js';

/** Metadata key that marks an agent message written by the harness itself, not by a model. */
export const NOTICE_KEY = 'tiny-harness/notice';

function partText(part: Part): string | undefined {
  const content = part.content;
  switch (content?.$case) {
    case 'text':
      return content.value;
    case 'data':
      return JSON.stringify(content.value);
    case 'url':
      return `[file ${part.filename || content.value}]`;
    case 'raw':
      return `[file ${part.filename || 'attachment'} (${part.mediaType || 'binary'})]`;
    default:
      return undefined;
  }
}

/**
 * The conversation a turn sends to its model: the task's history in order, without command
 * messages and their replies (CMD-7) and without the harness's own notices (an interrupted
 * turn, a provider failure), which the model did not say and should not imitate.
 */
export function modelHistory(history: readonly Message[]): ConversationMessage[] {
  const messages: ConversationMessage[] = [];
  for (const message of history) {
    if (isCommandExchange(message) || message.metadata?.[NOTICE_KEY] !== undefined) continue;
    const text = message.parts.map(partText).filter((t): t is string => t !== undefined).join('\n');
    if (!text) continue;
    messages.push(message.role === Role.ROLE_AGENT ? { role: 'assistant', content: text } : { role: 'user', content: text });
  }
  return messages;
}
