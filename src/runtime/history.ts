import { Role, type Message, type Part } from '@a2a-js/sdk';
import { isCommandExchange } from '../commands/index.js';
import { isFinalToolStatus, NOTICE_KEY, TOOL_CALL_KEY, toolCallsOf } from '../wire.js';
import type { ConversationMessage } from './model-gateway.js';

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
 * turn, a provider failure), which the model did not say and should not imitate. A tool call
 * goes as the call and its result, from the message that ended it (TOOL-1); a call that never
 * ended (its turn was cut short) is left out.
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
  messages: for (let i = history.length - 1; i >= 0; i -= 1) {
    const message = history[i]!;
    if (isCommandExchange(message) || message.metadata?.[NOTICE_KEY] !== undefined) continue;
    if (message.metadata?.[TOOL_CALL_KEY] !== undefined) {
      for (const call of toolCallsOf(message.parts)) {
        if (!isFinalToolStatus(call.status)) continue;
        const output = call.output ?? '';
        const size = output.length + JSON.stringify(call.input ?? {}).length;
        if (newestFirst.length > 0 && used + size > budgetChars) {
          cut = true;
          break messages;
        }
        used += size;
        newestFirst.push({
          role: 'tool',
          call: { id: call.id, tool: call.tool, input: call.input, output, failed: call.status !== 'succeeded' },
        });
      }
      continue;
    }
    const text = message.parts
      .map(partText)
      .filter((t): t is string => t !== undefined)
      .join('\n');
    if (!text) continue;
    if (newestFirst.length > 0 && used + text.length > budgetChars) {
      cut = true;
      break;
    }
    used += text.length;
    newestFirst.push(
      message.role === Role.ROLE_AGENT ? { role: 'assistant', content: text } : { role: 'user', content: text },
    );
  }
  // Cut short, the conversation starts at a user message: not an answer, nor a tool result without its question.
  if (cut) while (newestFirst.length > 1 && newestFirst.at(-1)!.role !== 'user') newestFirst.pop();
  return newestFirst.reverse();
}
