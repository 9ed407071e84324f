/**
 * Columns on a terminal: how many a text takes (a wide character, CJK or most emoji, two; a
 * combining mark none; styles none), measured by `string-width`, and text cut into rows of a
 * width by `wrap-ansi`, styles kept.
 */
import stringWidth from 'string-width';
import wrapAnsi from 'wrap-ansi';

/** The columns `text` takes on one row, its styles left out. */
export function columnsOf(text: string): number {
  return stringWidth(text);
}

/** Lines of at most `columns` (10 at least), broken at word boundaries; a longer word is cut where it must be. */
export function wrapWords(text: string, columns: number): string[] {
  return wrapAnsi(text, Math.max(10, columns), { hard: true }).split('\n');
}

/**
 * One line (no line break) as the terminal's rows of `columns`: cut anywhere, spaces kept, and
 * a wide character that does not fit at the end of a row moved to the next, as a terminal does.
 */
export function rowsOf(line: string, columns: number): string[] {
  return wrapAnsi(line, columns, { hard: true, wordWrap: false, trim: false }).split('\n');
}

/** `text` on one row of `columns`, cut with an ellipsis when longer. */
export function fit(text: string, columns: number): string {
  if (columns < 1 || stringWidth(text) <= columns) return text;
  return `${rowsOf(text, Math.max(1, columns - 1))[0]}…`;
}
