/**
 * A reply's Markdown for a terminal, rendered as it streams, from `marked`'s tokens: headings
 * and `**bold**` in bold, `*em*` in italics, code in cyan, links underlined (with the address
 * when it differs from the text), list markers as bullets, block quotes behind a dim `│ ` bar,
 * tables aligned in columns. The markers it turns into styles are not printed.
 *
 * Only the streaming edge is kept by hand: each line is rendered once it has ended (so styles
 * never outlive a line, and what is printed never changes); a fenced block's lines as they come;
 * a table once its last row has come, since its columns need every row. {@link pending} is
 * the unfinished rest, for the screen to show until its line ends.
 */
import { marked, type Token, type Tokens } from 'marked';
import { stripVTControlCharacters } from 'node:util';
import { columnsOf } from './text-width.js';

const BOLD_ON = '\x1b[1m';
const BOLD_OFF = '\x1b[22m';
const ITALIC_ON = '\x1b[3m';
const ITALIC_OFF = '\x1b[23m';
const UNDERLINE_ON = '\x1b[4m';
const UNDERLINE_OFF = '\x1b[24m';
const STRIKE_ON = '\x1b[9m';
const STRIKE_OFF = '\x1b[29m';
const CODE_ON = '\x1b[36m';
const CODE_OFF = '\x1b[39m';
const DIM_ON = '\x1b[2m';
const DIM_OFF = '\x1b[22m';

const FENCE = /^[ \t]{0,3}(`{3,}|~{3,})/;
const TABLE_DELIMITER = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

export interface MarkdownOptions {
  /** Styles on: when off, lines are passed through as they came (a terminal without colors). */
  styled?: boolean;
  /** Columns of the terminal, for a rule's length. */
  columns?: number;
}

export class TerminalMarkdown {
  /** The text after the last line break: the line still streaming. */
  private partial = '';
  /** Lines that may be a table, held until it is known. */
  private held: string[] = [];
  /** The marker of the fenced block we are in. */
  private fence: string | undefined;
  private readonly styled: boolean;
  private readonly columns: number;

  constructor(options: MarkdownOptions = {}) {
    this.styled = options.styled ?? true;
    this.columns = options.columns ?? 80;
  }

  /** The terminal text of the lines this chunk ended; the rest waits in {@link pending}. */
  push(chunk: string): string {
    const text = this.partial + chunk;
    const end = text.lastIndexOf('\n');
    if (end === -1) {
      this.partial = text;
      return '';
    }
    this.partial = text.slice(end + 1);
    return text
      .slice(0, end)
      .split('\n')
      .map((line) => this.line(line))
      .join('');
  }

  /** What has come but is not rendered yet (held table rows, the unfinished line), as it can be shown now. */
  pending(): string {
    const lines = [...this.held];
    if (this.partial) lines.push(this.preview(this.partial));
    return lines.join('\n');
  }

  /** The end of the reply: the rest, rendered; no line break is added after its last line. */
  end(): string {
    const last = this.partial;
    this.partial = '';
    let out: string;
    if (!last) out = this.flushHeld();
    else if (this.styled && this.fence === undefined && FENCE.test(last))
      out = this.flushHeld() + last; // a fence with nothing after it opens no block: it is a line of text
    else out = (this.line(last) + this.flushHeld()).replace(/\n$/, '');
    this.fence = undefined;
    return out;
  }

  /** One ended line, with its line break. */
  private line(line: string): string {
    if (!this.styled) return `${line}\n`;
    if (this.fence !== undefined) {
      if (this.closesFence(line)) {
        this.fence = undefined;
        return '';
      }
      return `${this.code(line)}\n`;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      this.fence = fence[1]!;
      // The fence itself is not printed (the block's color shows where it is); its language is, dimly.
      const info = line.slice(fence[0].length).trim();
      return this.flushHeld() + (info ? `${DIM_ON}${info}${DIM_OFF}\n` : '');
    }
    if (this.held.length === 1 && TABLE_DELIMITER.test(line) && line.includes('-')) {
      this.held.push(line);
      return '';
    }
    if (this.held.length >= 2 && line.includes('|')) {
      this.held.push(line);
      return '';
    }
    const before = this.flushHeld();
    if (line.includes('|')) {
      this.held.push(line); // perhaps a table's header: the next line says
      return before;
    }
    return before + `${this.block(line)}\n`;
  }

  private closesFence(line: string): boolean {
    const marker = this.fence ?? '';
    const trimmed = line.trim();
    return trimmed.startsWith(marker) && /^(`+|~+)$/.test(trimmed) && trimmed[0] === marker[0];
  }

  /** The held lines: a table when they make one, else each as a line of its own. */
  private flushHeld(): string {
    const held = this.held;
    this.held = [];
    if (held.length === 0) return '';
    const tokens = held.length >= 2 ? marked.lexer(held.join('\n')) : [];
    if (tokens.length === 1 && tokens[0]!.type === 'table') return this.table(tokens[0] as Tokens.Table);
    return held.map((line) => `${this.block(line)}\n`).join('');
  }

  /** A line outside code, rendered from its tokens; its indentation kept as it came. */
  private block(line: string): string {
    const indent = /^[ \t]*/.exec(line)![0];
    const rest = line.slice(indent.length);
    if (!rest) return '';
    return (
      indent +
      marked
        .lexer(rest)
        .map((token) => this.token(token))
        .join('')
    );
  }

  private token(token: Token): string {
    switch (token.type) {
      case 'heading':
        return BOLD_ON + this.inline(token.tokens ?? [], true) + BOLD_OFF;
      case 'paragraph':
        return this.inline(token.tokens ?? [], false);
      case 'text':
        return token.tokens ? this.inline(token.tokens, false) : token.text;
      case 'list':
        return (token as Tokens.List).items
          .map((item, i) => {
            const marker = token.ordered ? `${Number(token.start || 1) + i}. ` : '• ';
            const box = item.task ? (item.checked ? '[x] ' : '[ ] ') : '';
            return marker + box + item.tokens.map((t) => this.token(t)).join('');
          })
          .join('\n');
      case 'checkbox':
        return ''; // shown with its item's marker
      case 'blockquote':
        return DIM_ON + '│ ' + DIM_OFF + (token.tokens ?? []).map((t) => this.token(t)).join('');
      case 'hr':
        return DIM_ON + '─'.repeat(Math.min(this.columns, 80)) + DIM_OFF;
      case 'code':
        return this.code(token.text);
      case 'space':
        return '';
      default:
        return token.raw;
    }
  }

  /** Inline tokens; `bold` when the text around them is bold already (a heading, a strong span). */
  private inline(tokens: readonly Token[], bold: boolean): string {
    return tokens
      .map((token) => {
        switch (token.type) {
          case 'text':
            return token.tokens ? this.inline(token.tokens, bold) : token.text;
          case 'escape':
            return token.text;
          case 'strong':
            return BOLD_ON + this.inline(token.tokens ?? [], true) + (bold ? '' : BOLD_OFF);
          case 'em':
            return ITALIC_ON + this.inline(token.tokens ?? [], bold) + ITALIC_OFF;
          case 'del':
            return STRIKE_ON + this.inline(token.tokens ?? [], bold) + STRIKE_OFF;
          case 'codespan':
            return this.code(token.text);
          case 'link': {
            const text = this.inline(token.tokens ?? [], bold);
            const shown = stripVTControlCharacters(text) === token.href ? '' : ` ${DIM_ON}(${token.href})${DIM_OFF}`;
            return UNDERLINE_ON + text + UNDERLINE_OFF + (bold && shown ? shown + BOLD_ON : shown);
          }
          case 'image':
            return `[${token.text || 'image'}] ${DIM_ON}(${token.href})${DIM_OFF}${bold ? BOLD_ON : ''}`;
          case 'br':
            return ' ';
          default:
            return token.raw;
        }
      })
      .join('');
  }

  /** A table in aligned columns: the header in bold, a rule under it. */
  private table(table: Tokens.Table): string {
    const render = (cells: Tokens.TableCell[]) => cells.map((cell) => this.inline(cell.tokens, false));
    const rows = [render(table.header), ...table.rows.map(render)];
    const widths = table.header.map((_, i) => Math.max(...rows.map((row) => columnsOf(row[i] ?? ''))));
    const lines = rows.map((row, r) =>
      row
        .map((cell, i) => {
          const pad = ' '.repeat(widths[i]! - columnsOf(cell));
          const align = table.align[i];
          if (align === 'right') return pad + cell;
          if (align === 'center') return pad.slice(0, pad.length >> 1) + cell + pad.slice(pad.length >> 1);
          return cell + pad;
        })
        .join(r === 0 ? ' │ ' : ` ${DIM_ON}│${DIM_OFF} `)
        .trimEnd(),
    );
    const rule = DIM_ON + widths.map((w) => '─'.repeat(w)).join('─┼─') + DIM_OFF;
    return [BOLD_ON + lines[0] + BOLD_OFF, rule, ...lines.slice(1)].map((line) => `${line}\n`).join('');
  }

  private code(text: string): string {
    return this.styled ? CODE_ON + text + CODE_OFF : text;
  }

  /** The unfinished line as it can be shown before it ends (a span may still close, a table begin). */
  private preview(text: string): string {
    if (!this.styled) return text;
    if (this.fence !== undefined) return this.code(text);
    return FENCE.test(text) || text.includes('|') ? text : this.block(text);
  }
}
