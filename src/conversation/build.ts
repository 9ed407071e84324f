/**
 * CMD-36: what a turn sends its model, built in one place from the record. In order:
 * 1. the system prompt, then each instruction file's text, in the configured order;
 * 2. the latest compaction point's summary, as the first user message;
 * 3. the last user message the summary covers, verbatim (a summary never replaces it);
 * 4. every message after the compaction point, verbatim.
 * Never command exchanges (CMD-7), the harness's notices, rewind marks or what they hid (CMD-37).
 *
 * The budget (`contextChars`) covers all of it. What still does not fit is cut from the oldest
 * verbatim messages, the newest always kept, and said (`cut`): the caller tells the user.
 */
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { isCommandExchange } from '../commands/index.js';
import {
  compactionOf,
  isFinalToolStatus,
  NOTICE_KEY,
  REWIND_KEY,
  TOOL_CALL_KEY,
  textOf,
  toolCallsOf,
  type CompactionPoint,
} from '../wire.js';
import { visibleHistory } from './visible.js';
import type { ConversationMessage } from './message.js';

/** One instruction file as a turn sends it: where it was read, and its text. */
export interface InstructionFile {
  path: string;
  text: string;
}

export interface ConversationInput {
  systemPrompt?: string;
  instructions?: readonly InstructionFile[];
  /** The conversation as stored, oldest first: the earlier tasks of the context (CMD-35), then the task's own history. */
  history: readonly Message[];
  /** The most characters the turn sends its model, everything included (default: no bound). */
  budgetChars?: number;
}

/** What each part of a turn's request weighs, in characters. */
export interface ConversationSizes {
  systemPrompt: number;
  instructions: number;
  summary: number;
  /** The verbatim messages sent (the pinned request included). */
  history: number;
}

export interface BuiltConversation {
  /** The system prompt with the instructions after it; undefined when both are empty. */
  system: string | undefined;
  messages: ConversationMessage[];
  sizes: ConversationSizes;
  /** How many verbatim messages did not fit the budget and were left out; 0 when none. */
  cut: number;
  /** The compaction point the summary comes from, if there is one. */
  compaction?: CompactionPoint;
}

/** A stored message as the model reads it: several entries for a message of tool calls, none for one it does not see. */
export interface ConversationEntry {
  /** The stored message it comes from. */
  message: Message;
  sent: ConversationMessage[];
  chars: number;
}

/** The summary's first words, so the model knows what it is reading. */
export const SUMMARY_HEADING = 'Summary of the conversation so far (earlier messages were compacted into it):';

export function buildConversation(input: ConversationInput): BuiltConversation {
  const system = systemText(input.systemPrompt, input.instructions ?? []);
  const { summary, pinned, entries, compaction } = conversationAfterPoint(input.history);
  const summaryMessage: ConversationMessage[] = summary
    ? [{ role: 'user', content: `${SUMMARY_HEADING}\n\n${summary}` }]
    : [];
  const pinnedSent = pinned?.sent ?? [];
  const fixed =
    (input.systemPrompt?.length ?? 0) +
    instructionChars(input.instructions ?? []) +
    charsOf(summaryMessage) +
    charsOf(pinnedSent);
  const budget = input.budgetChars ?? Infinity;
  // The newest first, while they fit; the newest always goes.
  let used = fixed;
  let kept = entries.length;
  while (kept > 0) {
    const entry = entries[kept - 1]!;
    if (kept < entries.length && used + entry.chars > budget) break;
    used += entry.chars;
    kept -= 1;
  }
  let tail = entries.slice(kept);
  let cut = kept;
  // Cut short, the verbatim part starts at a user message: not an answer, nor a tool result without its question.
  if (cut > 0) {
    while (tail.length > 1 && tail[0]!.sent[0]?.role !== 'user') {
      tail = tail.slice(1);
      cut += 1;
    }
  }
  const verbatim = [...pinnedSent, ...tail.flatMap((entry) => entry.sent)];
  return {
    system,
    messages: [...summaryMessage, ...verbatim],
    sizes: {
      systemPrompt: input.systemPrompt?.length ?? 0,
      instructions: instructionChars(input.instructions ?? []),
      summary: charsOf(summaryMessage),
      history: charsOf(verbatim),
    },
    cut,
    ...(compaction ? { compaction } : {}),
  };
}

/** The system prompt, then each instruction file under a line that names it. */
function systemText(systemPrompt: string | undefined, instructions: readonly InstructionFile[]): string | undefined {
  const parts = [systemPrompt ?? '', ...instructions.map((file) => instructionText(file))].filter(Boolean);
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

function instructionText(file: InstructionFile): string {
  return file.text.trim() ? `Instructions from ${file.path}:\n\n${file.text.trim()}` : '';
}

function instructionChars(instructions: readonly InstructionFile[]): number {
  return instructions.reduce((sum, file) => sum + instructionText(file).length, 0);
}

/**
 * The conversation from the latest compaction point on: its summary, the pinned last user
 * message it covers, and every visible message after what it covers, as the model reads them.
 */
export function conversationAfterPoint(history: readonly Message[]): {
  summary: string | undefined;
  pinned: ConversationEntry | undefined;
  entries: ConversationEntry[];
  compaction: CompactionPoint | undefined;
} {
  const visible = visibleHistory(history);
  let point = -1;
  for (let i = visible.length - 1; i >= 0; i -= 1) {
    if (compactionOf(visible[i]!)) {
      point = i;
      break;
    }
  }
  if (point < 0) return { summary: undefined, pinned: undefined, entries: entriesOf(visible), compaction: undefined };
  const compaction = compactionOf(visible[point]!)!;
  // What the summary covers ends at `upTo` (the newest such message before the point).
  let covered = point - 1;
  while (covered >= 0 && visible[covered]!.messageId !== compaction.upTo) covered -= 1;
  const before = entriesOf(visible.slice(0, covered + 1));
  const pinned = before.findLast((entry) => entry.message.role === Role.ROLE_USER);
  const after = entriesOf(visible.slice(covered + 1).filter((_, i) => i + covered + 1 !== point));
  return { summary: textOf(visible[point]!.parts), pinned, entries: after, compaction };
}

/** The messages the model reads, each with what it is sent as; others are left out. */
export function entriesOf(history: readonly Message[]): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  for (const message of history) {
    const sent = sentAs(message);
    if (sent.length > 0) entries.push({ message, sent, chars: charsOf(sent) });
  }
  return entries;
}

/**
 * What the model is sent of one stored message. Not command messages and their replies
 * (CMD-7), nor the harness's own notices (an interrupted turn, a provider failure), which the
 * model did not say and should not imitate, nor compaction points and rewind marks, which the
 * builder reads itself. A tool call goes as the call and its result, from the message that
 * ended it (TOOL-1); a call that never ended (its turn was cut short) is left out.
 */
function sentAs(message: Message): ConversationMessage[] {
  const metadata = message.metadata;
  if (isCommandExchange(message) || metadata?.[NOTICE_KEY] !== undefined) return [];
  if (compactionOf(message) || metadata?.[REWIND_KEY] !== undefined) return [];
  if (metadata?.[TOOL_CALL_KEY] !== undefined) {
    return toolCallsOf(message.parts)
      .filter((call) => isFinalToolStatus(call.status))
      .map((call) => ({
        role: 'tool',
        call: {
          id: call.id,
          tool: call.tool,
          input: call.input,
          output: call.output ?? '',
          failed: call.status !== 'succeeded',
        },
      }));
  }
  const text = message.parts
    .map(partText)
    .filter((t): t is string => t !== undefined)
    .join('\n');
  if (!text) return [];
  return [message.role === Role.ROLE_AGENT ? { role: 'assistant', content: text } : { role: 'user', content: text }];
}

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

/** The characters a message weighs: its text, or a tool call's input and output. */
export function charsOf(messages: readonly ConversationMessage[]): number {
  let chars = 0;
  for (const message of messages)
    chars +=
      message.role === 'tool'
        ? (message.call.output ?? '').length + JSON.stringify(message.call.input ?? {}).length
        : message.content.length;
  return chars;
}
