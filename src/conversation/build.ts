/**
 * CMD-36: what a turn sends its model, built in one place from the record. In order:
 * 1. the system prompt, then each instruction file's text, in the configured order;
 * 2. the latest compaction point's summary, as the first user message;
 * 3. the last user message the summary covers, verbatim (a summary never replaces it);
 * 4. every message after the compaction point, verbatim.
 * Never command exchanges (CMD-7), the harness's notices, a delegated sub-task's notes, rewind
 * marks or what they hid (CMD-37).
 *
 * The budget (`contextChars`) covers all of it. What still does not fit is cut from the oldest
 * verbatim messages, the newest always kept, and said (`cut`): the caller tells the user.
 */
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { isCommandExchange } from '../commands/index.js';
import {
  COMPACTION_KEY,
  compactionOf,
  isFinalToolStatus,
  NOTICE_KEY,
  REWIND_KEY,
  subtaskNoteOf,
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
  const visible = visibleHistory(input.history);
  const { point, covered } = latestPoint(visible);
  const compaction = point < 0 ? undefined : compactionOf(visible[point]!);
  const summaryMessage: ConversationMessage[] = compaction
    ? [{ role: 'user', content: `${SUMMARY_HEADING}\n\n${textOf(visible[point]!.parts)}` }]
    : [];
  const pinnedSent = compaction ? (pinnedBefore(visible, covered)?.sent ?? []) : [];
  const budget = input.budgetChars ?? Infinity;
  let used =
    (input.systemPrompt?.length ?? 0) +
    instructionChars(input.instructions ?? []) +
    charsOf(summaryMessage) +
    charsOf(pinnedSent);
  // Read from the end, the newest first, while they fit (the newest always goes): a turn's cost
  // does not grow with the part of a long conversation left out.
  const newestFirst: ConversationEntry[] = [];
  /** Where the budget ran out: this message and the older ones are left out. */
  let cutAt = -1;
  for (let i = visible.length - 1; i > covered; i -= 1) {
    if (i === point) continue;
    const message = visible[i]!;
    const sent = sentAs(message);
    if (sent.length === 0) continue;
    const chars = charsOf(sent);
    if (newestFirst.length > 0 && used + chars > budget) {
      cutAt = i;
      break;
    }
    used += chars;
    newestFirst.push({ message, sent, chars });
  }
  let dropped = 0;
  if (cutAt >= 0) {
    // Counted by their metadata alone, without reading their text: what was left out is long.
    for (let i = cutAt; i > covered; i -= 1) if (i !== point && isConversationMessage(visible[i]!)) dropped += 1;
    // Cut short, the verbatim part starts at a user message: not an answer, nor a tool result without its question.
    while (newestFirst.length > 1 && newestFirst.at(-1)!.sent[0]?.role !== 'user') {
      newestFirst.pop();
      dropped += 1;
    }
  }
  const verbatim = [...pinnedSent, ...newestFirst.reverse().flatMap((entry) => entry.sent)];
  return {
    system,
    messages: [...summaryMessage, ...verbatim],
    sizes: {
      systemPrompt: input.systemPrompt?.length ?? 0,
      instructions: instructionChars(input.instructions ?? []),
      summary: charsOf(summaryMessage),
      history: charsOf(verbatim),
    },
    cut: dropped,
    ...(compaction ? { compaction } : {}),
  };
}

/**
 * The latest compaction point's index in the visible history (-1 when none), and the index of
 * the last message its summary covers (its `upTo`, the newest such message before it; -1 when
 * there is no point).
 */
function latestPoint(visible: readonly Message[]): { point: number; covered: number } {
  for (let point = visible.length - 1; point >= 0; point -= 1) {
    const compaction = compactionOf(visible[point]!);
    if (!compaction) continue;
    let covered = point - 1;
    while (covered >= 0 && visible[covered]!.messageId !== compaction.upTo) covered -= 1;
    return { point, covered };
  }
  return { point: -1, covered: -1 };
}

/** The last user message the summary covers, which is sent verbatim after it. */
function pinnedBefore(visible: readonly Message[], covered: number): ConversationEntry | undefined {
  for (let i = covered; i >= 0; i -= 1) {
    const message = visible[i]!;
    if (message.role !== Role.ROLE_USER) continue;
    const sent = sentAs(message);
    if (sent.length > 0) return { message, sent, chars: charsOf(sent) };
  }
  return undefined;
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
  const { point, covered } = latestPoint(visible);
  if (point < 0) return { summary: undefined, pinned: undefined, entries: entriesOf(visible), compaction: undefined };
  return {
    summary: textOf(visible[point]!.parts),
    pinned: pinnedBefore(visible, covered),
    entries: entriesOf(visible.slice(covered + 1).filter((_, i) => i + covered + 1 !== point)),
    compaction: compactionOf(visible[point]!),
  };
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
  if (!isConversationMessage(message)) return [];
  const metadata = message.metadata;
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

/** Whether a message is the user's or the model's, by its metadata: not a command exchange, a notice, a compaction point or a rewind mark. */
function isConversationMessage(message: Message): boolean {
  const metadata = message.metadata;
  if (isCommandExchange(message) || metadata?.[NOTICE_KEY] !== undefined) return false;
  // A delegated sub-task's notes are for clients: the model has its result as the `delegate` call's output.
  if (subtaskNoteOf(metadata)?.agent !== undefined) return false;
  return metadata?.[COMPACTION_KEY] === undefined && metadata?.[REWIND_KEY] === undefined;
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

/** The notice of a conversation cut to fit its model's budget (CMD-36). */
export function cutText(cut: number): string {
  return `The conversation is longer than this model's budget: its oldest ${cut === 1 ? 'message was' : `${cut} messages were`} left out of this turn. Send /compact to summarise them instead.`;
}
