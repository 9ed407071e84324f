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
 *
 * Only the newest messages that fit in `budgetChars` characters go (the newest one always):
 * a long conversation outgrows every model's context window, and the provider would refuse
 * it. A conversation cut short starts at a user message, as some providers require. The
 * history is read from its end, so a turn's cost does not grow with the part left out.
 */
export function modelHistory(history: readonly Message[], budgetChars = Infinity): ConversationMessage[] {
  const newestFirst: ConversationMessage[] = [];
  let used = 0;
  let cut = false;
  for (let i = history.length - 1; i >= 0; i -= 1) {
    const message = history[i]!;
    if (isCommandExchange(message) || message.metadata?.[NOTICE_KEY] !== undefined) continue;
    const text = message.parts.map(partText).filter((t): t is string => t !== undefined).join('\n');
    if (!text) continue;
    if (newestFirst.length > 0 && used + text.length > budgetChars) {
      cut = true;
      break;
    }
    used += text.length;
    newestFirst.push(message.role === Role.ROLE_AGENT ? { role: 'assistant', content: text } : { role: 'user', content: text });
  }
  if (cut) while (newestFirst.length > 1 && newestFirst.at(-1)!.role === 'assistant') newestFirst.pop();
  return newestFirst.reverse();
}
