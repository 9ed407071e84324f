/**
 * CMD-36: compaction, the pure half. What a summary covers (`upTo`), what the summariser reads
 * and is told, and the compaction point that stores the result. The model request itself is
 * the runtime's (`runtime/compactor.ts`); `buildConversation` then sends the summary in place
 * of what it covers.
 *
 * A recent tail of the conversation always stays verbatim: the newest messages within
 * `tailShare` of the budget, and never more than half of those after the latest point, so a
 * short conversation still has something to compact. The last user message the summary covers
 * stays verbatim too (`buildConversation` pins it).
 *
 * What the summary covers may be far longer than the model can read (a conversation cut before,
 * or its context's earlier tasks): the transcript then goes in parts that each fit the budget,
 * the summary of the parts before carried into each next request.
 */
import { Role, type Message } from '@a2a-js/sdk';
import { isCommandExchange } from '../commands/index.js';
import { COMPACTION_KEY, compactionOf, rewindOf, textPart, type CompactionPoint } from '../wire.js';
import { buildConversation, conversationAfterPoint, type ConversationEntry, type InstructionFile } from './build.js';
import type { ConversationMessage } from './message.js';
import { visibleHistory } from './visible.js';

/** What a compaction is computed from: the conversation as a turn would send it. */
export interface CompactionInput {
  systemPrompt?: string;
  instructions?: readonly InstructionFile[];
  /** The conversation as stored, oldest first (the earlier tasks of the context included). */
  history: readonly Message[];
  /** The model's budget (`contextChars`). */
  budgetChars: number;
  /** The share of the budget the verbatim tail may take (`compact.tailShare`). */
  tailShare: number;
  /** What the user asked the summary to keep (`/compact <focus>`). */
  focus?: string;
}

/** A compaction to make: the summariser's request, and where its summary ends. */
export interface CompactionPlan {
  /** The id of the last message the summary covers. */
  upTo: string;
  /** The summariser's instructions (its system prompt). */
  instructions: string;
  /**
   * What it summarises: the previous summary, then the messages, one "User:/Assistant:/Tool call"
   * line each, in parts that each fit the model's budget (one part, mostly).
   */
  parts: string[];
  /** How many stored messages the summary covers (the previous summary's not counted). */
  covered: number;
  /** The characters the next turn would send without the compaction (system prompt and instructions included). */
  charsBefore: number;
}

/** The summariser's first words: a request a test (or a log reader) can tell from a turn's. */
export const SUMMARISER_ROLE = 'You compact conversations between a user and an AI assistant.';

/**
 * The compaction of the conversation as it stands, or undefined when there is nothing to
 * compact: everything after the latest point belongs to the tail, or the summary would cover
 * only the message it must keep verbatim anyway.
 */
export function planCompaction(input: CompactionInput): CompactionPlan | undefined {
  const { summary, pinned, entries } = conversationAfterPoint(input.history);
  const tail = tailLength(entries, input.budgetChars * input.tailShare);
  const covered = entries.slice(0, entries.length - tail);
  const newPinned = covered.findLast((entry) => entry.message.role === Role.ROLE_USER) ?? pinned;
  if (!covered.some((entry) => entry !== newPinned)) return undefined;
  const lines = [
    ...(summary ? [`Summary of the conversation before:\n${summary}`] : []),
    // The previous pinned message was sent verbatim: what the model knew, so the summary keeps it.
    ...(pinned ? [pinned] : []).concat(covered).map(transcriptLine),
  ];
  const summaryChars = Math.max(1000, Math.floor(input.budgetChars * input.tailShare));
  const instructions = summariserInstructions(input.focus, summaryChars);
  return {
    upTo: covered.at(-1)!.message.messageId,
    instructions,
    parts: inParts(lines, Math.max(PART_CHARS_LEAST, input.budgetChars - instructions.length - 2 * summaryChars)),
    covered: covered.length,
    charsBefore: conversationChars(input, input.history),
  };
}

/** The least characters of transcript one summary request reads, however small the budget. */
const PART_CHARS_LEAST = 2000;

/**
 * The transcript's lines joined into parts of at most `partChars` characters, in order; a line
 * longer than that alone is cut, saying so (one tool output of a megabyte says little more).
 */
export function inParts(lines: readonly string[], partChars: number): string[] {
  const parts: string[] = [];
  let part = '';
  for (const whole of lines) {
    const line =
      whole.length > partChars
        ? `${whole.slice(0, partChars - 40)} [… ${whole.length - partChars + 40} characters cut]`
        : whole;
    if (part && part.length + 2 + line.length > partChars) {
      parts.push(part);
      part = '';
    }
    part = part ? `${part}\n\n${line}` : line;
  }
  if (part) parts.push(part);
  return parts;
}

/** How many of the newest entries stay verbatim: those within `tailChars`, at most half of them all. */
function tailLength(entries: readonly ConversationEntry[], tailChars: number): number {
  const most = Math.floor(entries.length / 2);
  let kept = 0;
  let used = 0;
  while (kept < most) {
    const entry = entries[entries.length - 1 - kept]!;
    if (used + entry.chars > tailChars) break;
    used += entry.chars;
    kept += 1;
  }
  return kept;
}

/** One entry as the summariser reads it. */
function transcriptLine(entry: ConversationEntry): string {
  return entry.sent.map(sentLine).join('\n');
}

function sentLine(message: ConversationMessage): string {
  if (message.role === 'user') return `User: ${message.content}`;
  if (message.role === 'assistant') return `Assistant: ${message.content}`;
  if (message.role !== 'tool') return '';
  const { tool, input, output, failed } = message.call;
  return `Tool call ${tool} ${JSON.stringify(input ?? {})} ${failed ? 'failed' : 'returned'}: ${output}`;
}

/** The summariser's system prompt: what to keep, and how long the summary may be. */
export function summariserInstructions(focus: string | undefined, mostChars: number): string {
  const lines = [
    SUMMARISER_ROLE,
    'The user will give you the conversation so far; write the summary the assistant will read instead of it, to carry on the conversation in less context.',
    'Keep what the assistant needs to go on: what the user wants and asked for, the decisions taken and why, facts, names, numbers, file paths and code that matter, what was done (tool calls and their results), and what is still open.',
    'Write compact notes in the third person, without a greeting or any words about this request.',
  ];
  if (Number.isFinite(mostChars)) lines.push(`Keep it under ${mostChars.toLocaleString('en-US')} characters.`);
  if (focus?.trim()) lines.push(`The user asks that the summary keep in particular: ${focus.trim()}`);
  return lines.join('\n');
}

/**
 * The user message of the summary request for the plan's part `index`: the first part alone;
 * each later one with the summary of the parts before it, to be folded into one summary.
 */
export function summaryRequestText(plan: CompactionPlan, index = 0, summarySoFar = ''): string {
  const part = plan.parts[index]!;
  if (index === 0) return `The conversation to summarise:\n\n${part}\n\nWrite the summary now.`;
  return `The summary of the conversation so far:\n\n${summarySoFar}\n\nThe conversation that follows it (part ${index + 1} of ${plan.parts.length}):\n\n${part}\n\nWrite the summary of the whole conversation now.`;
}

/** The point that stores a summary: an agent message whose text is the summary, `COMPACTION_KEY` in its metadata. */
export function compactionMessage(
  input: CompactionInput,
  plan: CompactionPlan,
  made: { messageId: string; taskId: string; contextId: string; summary: string; model: string },
): { message: Message; point: CompactionPoint } {
  const point: CompactionPoint = { upTo: plan.upTo, model: made.model, charsBefore: plan.charsBefore, charsAfter: 0 };
  const message: Message = {
    messageId: made.messageId,
    taskId: made.taskId,
    contextId: made.contextId,
    role: Role.ROLE_AGENT,
    parts: [textPart(made.summary)],
    metadata: { [COMPACTION_KEY]: point },
    extensions: [],
    referenceTaskIds: [],
  };
  point.charsAfter = conversationChars(input, [...input.history, message]);
  return { message, point };
}

/** Everything a turn would send, in characters, without a budget's cut. */
function conversationChars(input: CompactionInput, history: readonly Message[]): number {
  const { sizes } = buildConversation({ systemPrompt: input.systemPrompt, instructions: input.instructions, history });
  return sizes.systemPrompt + sizes.instructions + sizes.summary + sizes.history;
}

/**
 * Whether the conversation moved on since `seen` was read: a message that is not a command
 * exchange joined it (a turn's, a sub-task's note, another compaction point or a rewind mark),
 * or a rewind hid a message. Command exchanges (a `/status` meanwhile) change nothing the model reads.
 */
export function conversationMovedOn(seen: readonly Message[], stored: readonly Message[]): boolean {
  const seenIds = new Set(visibleHistory(seen).map((message) => message.messageId));
  const now = visibleHistory(stored);
  const marks = (message: Message) => compactionOf(message) !== undefined || rewindOf(message) !== undefined;
  if (now.some((message) => !seenIds.has(message.messageId) && (!isCommandExchange(message) || marks(message))))
    return true;
  const nowIds = new Set(now.map((message) => message.messageId));
  return [...seenIds].some((id) => !nowIds.has(id));
}
