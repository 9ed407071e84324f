/**
 * How the terminal chat draws what was done to the conversation (the conversation extension):
 * a compaction point and a rewind mark as one divider line each, and `/context`'s report as a
 * bar of the model's budget, each part of what fills it drawn with its own character.
 */
import type { Message } from '@a2a-js/sdk';
import { compactionOf, rewindOf, type CompactionPoint } from '../wire.js';
import { type ContextReport } from '../conversation-replies.js';
import type { Style } from './style.js';
import { columnsOf } from './text-width.js';

/** Below this many columns `/context` is shown as its reply's text: the bar would say too little. */
export const CONTEXT_BAR_MIN_COLUMNS = 50;

/** The widest the bar itself is drawn. */
const BAR_MAX_CELLS = 40;

/** The parts of a report in the bar's order, each with its character and its name in the legend. */
const PARTS: ReadonlyArray<[keyof ContextReport['parts'], string, string]> = [
  ['systemPrompt', '█', 'system prompt'],
  ['instructions', '▓', 'instructions'],
  ['tools', '▒', 'tools'],
  ['summary', '▞', 'summary'],
  ['history', '░', 'history'],
];
const FREE = '·';

export function compactionLine(point: Pick<CompactionPoint, 'charsBefore' | 'charsAfter'>): string {
  const exact = (n: number) => n.toLocaleString('en-US');
  return `── conversation compacted: ${exact(point.charsBefore)} → ${exact(point.charsAfter)} characters ──`;
}

export function rewindLine(hidden: number): string {
  return `── rewound: ${hidden} message${hidden === 1 ? '' : 's'} hidden ──`;
}

/** The divider a message of a task's history stands for, when it is a compaction point or a rewind mark. */
export function markLineOf(message: Pick<Message, 'metadata'>): string | undefined {
  const point = compactionOf(message);
  if (point) return compactionLine(point);
  const mark = rewindOf(message);
  return mark ? rewindLine(mark.hidden.length) : undefined;
}

/**
 * `/context`'s report on two lines for a terminal of `columns`: the bar with the share used and
 * the characters, then the legend of its parts; undefined when the terminal is too narrow.
 */
export function contextBar(report: ContextReport, columns: number, style: Style): string | undefined {
  if (columns < CONTEXT_BAR_MIN_COLUMNS || report.budgetChars <= 0) return undefined;
  const share = Number.isFinite(report.share) ? report.share : report.usedChars / report.budgetChars;
  const about = ` ${Math.round(share * 100)}% · ${count(report.usedChars)} of ${count(report.budgetChars)} characters`;
  const model = report.model ? ` · ${report.model}` : '';
  const prefix = '[/context] ';
  const cells = Math.max(10, Math.min(BAR_MAX_CELLS, columns - 1 - columnsOf(prefix + about + model) - 2));
  let bar = '';
  let sum = 0;
  for (const [part, glyph] of PARTS) {
    const from = cellsFor(sum, report.budgetChars, cells);
    sum += Math.max(0, report.parts[part] ?? 0);
    bar += glyph.repeat(cellsFor(sum, report.budgetChars, cells) - from);
  }
  bar += FREE.repeat(cells - bar.length);
  const line = `${prefix}▕${bar}▏${about}${columnsOf(prefix + about + model) + cells + 2 < columns ? model : ''}`;
  const legend = PARTS.map(([part, glyph, name]) => `${glyph} ${name} ${count(report.parts[part] ?? 0)}`);
  return `${style.command(line)}\n${style.dim(`  ${legend.join('  ')}`)}`;
}

/** The cells of `cells` that `chars` of `budget` fill, at most all of them. */
function cellsFor(chars: number, budget: number, cells: number): number {
  return Math.min(cells, Math.round((chars / budget) * cells));
}

/** A count of characters as people read it: 950, 12.3k, 1.2M. */
function count(chars: number): string {
  if (chars < 1000) return String(chars);
  if (chars < 1_000_000) return `${(chars / 1000).toFixed(chars < 10_000 ? 1 : 0)}k`;
  return `${(chars / 1_000_000).toFixed(1)}M`;
}
