/**
 * The data of the conversation extension's command replies, as the clients read them (the
 * terminal chat and the web page both import it): the points `/rewind` lists, what `/rewind n`
 * did, the task `/fork` made, what `/context` measures. Readers, not writers: a reply missing a
 * field reads as none. The metadata keys themselves are in `wire.ts`.
 */
import type { Part } from '@a2a-js/sdk';

/** The commands whose replies the clients act on. */
export const REWIND_COMMAND = 'rewind';
export const FORK_COMMAND = 'fork';
export const CONTEXT_COMMAND = 'context';
export const COMPACT_COMMAND = 'compact';

/** The data part of a message (a command's reply), if it has one. */
export function dataOf(parts: readonly Part[] | undefined): Record<string, unknown> | undefined {
  const part = (parts ?? []).find((p) => p.content?.$case === 'data');
  const value = part?.content?.$case === 'data' ? part.content.value : undefined;
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
}

/** A point `/rewind` lists (`{points: [...]}`, newest first): before the n-th newest user message. */
export type RewindChoice = { n: number; messageId: string; preview: string; text: string };

export function rewindChoicesOf(data: Record<string, unknown> | undefined): RewindChoice[] {
  const points = Array.isArray(data?.points) ? (data.points as Partial<RewindChoice>[]) : [];
  return points.filter((p): p is RewindChoice => typeof p?.n === 'number' && typeof p.text === 'string');
}

/** What `/rewind n` did (`{rewoundTo: {n, messageId, text}, hidden}`): the message taken back, and how many were hidden. */
export interface Rewound {
  n: number;
  messageId: string;
  text: string;
  hidden: number;
}

export function rewoundOf(data: Record<string, unknown> | undefined): Rewound | undefined {
  const to = data?.rewoundTo as Partial<Rewound> | undefined;
  if (typeof to?.n !== 'number' || typeof to.text !== 'string') return undefined;
  return { n: to.n, messageId: String(to.messageId ?? ''), text: to.text, hidden: Number(data?.hidden) || 0 };
}

/** The task `/fork` made: `{taskId, contextId, messages}` (its `task_ref` names it too). */
export function forkedOf(data: Record<string, unknown> | undefined): { taskId: string; contextId: string } | undefined {
  return typeof data?.taskId === 'string' && data.taskId
    ? { taskId: data.taskId, contextId: String(data.contextId ?? '') }
    : undefined;
}

/** What `/context` measures, in characters: the turn's budget, what fills it (`share` 0..1), by part. */
export interface ContextReport {
  model: string;
  budgetChars: number;
  usedChars: number;
  share: number;
  parts: { systemPrompt: number; instructions: number; tools: number; summary: number; history: number };
  /** The provider's count of the last turn's input tokens, when known. */
  tokens?: { input: number; model: string };
}

export function contextReportOf(data: Record<string, unknown> | undefined): ContextReport | undefined {
  const report = data as Partial<ContextReport> | undefined;
  const sized = typeof report?.budgetChars === 'number' && typeof report.usedChars === 'number';
  return sized && report.parts ? (report as ContextReport) : undefined;
}
