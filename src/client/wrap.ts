/**
 * Plain text cut into lines of at most `columns` characters at word boundaries, for the lines the
 * chat writes itself (a tool call's line): a word longer than a line is cut where it must be.
 */
export function wrapWords(text: string, columns: number): string[] {
  const width = Math.max(10, columns);
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/(?<=\s)(?=\S)/)) {
      // `word` keeps the spaces after it; they may end a line, and are dropped there.
      if (line && [...(line + word.trimEnd())].length > width) {
        lines.push(line.trimEnd());
        line = '';
      }
      let rest = word;
      while ([...rest.trimEnd()].length > width) {
        const chars = [...rest];
        lines.push(chars.slice(0, width).join(''));
        rest = chars.slice(width).join('');
      }
      line += rest;
    }
    lines.push(line.trimEnd());
  }
  return lines;
}
