/**
 * A light Markdown rendering for a terminal, done as the reply streams in: `**bold**` and
 * headings in bold, `` `code` `` and fenced code blocks in cyan, list markers as bullets. The
 * markers it turns into styles are not printed; everything else is printed as it came.
 *
 * A chunk can end in the middle of a marker (`*` of `**`, the start of a line that may be a
 * fence), so the few characters that cannot be decided yet wait for the next chunk, or for
 * {@link TerminalMarkdown.end}. Styles never outlive a line (a fence excepted): a stray `**`
 * bolds at most the rest of its line.
 */
const BOLD_ON = '\x1b[1m';
const BOLD_OFF = '\x1b[22m';
const CODE_ON = '\x1b[36m';
const CODE_OFF = '\x1b[39m';

const FENCE = /^[ \t]{0,3}(```|~~~)[^\n]*\n/;
const HEADING = /^#{1,6}[ \t]+/;
const BULLET = /^([ \t]*)[-*+][ \t]+/;
/** What a line may start with before it is known whether it is a fence, heading or list item. */
const UNDECIDED_LINE_START = /^[ \t]*(?:`{1,3}|~{1,3}|#{1,6}|[-*+])?$/;

export class TerminalMarkdown {
  private held = '';
  private atLineStart = true;
  private inFence = false;
  private fenceMarker = '';
  private bold = false;
  private code = false;
  private heading = false;

  /** The terminal text for this chunk (possibly less than all of it: the rest waits). */
  push(chunk: string): string {
    const text = this.held + chunk;
    this.held = '';
    return this.scan(text, false);
  }

  /** The end of the reply: what was held back, and every style closed. */
  end(): string {
    const text = this.held;
    this.held = '';
    const out = this.scan(text, true) + this.closeInline();
    const closing = this.inFence ? CODE_OFF : '';
    this.inFence = false;
    this.atLineStart = true;
    return out + closing;
  }

  private scan(text: string, final: boolean): string {
    let out = '';
    let i = 0;
    while (i < text.length) {
      if (this.atLineStart) {
        const rest = text.slice(i);
        // At the end, a last line without its newline still closes a fence; it opens none, as
        // nothing follows it: it is then a line of text like any other.
        const fence = FENCE.exec(rest) ?? (final && this.inFence ? /^[ \t]{0,3}(```|~~~)[^\n]*$/.exec(rest) : null);
        if (fence && (!this.inFence || fence[1] === this.fenceMarker)) {
          // The fence line itself is not printed: the block's color shows where it is.
          this.inFence = !this.inFence;
          this.fenceMarker = this.inFence ? fence[1]! : '';
          out += this.inFence ? CODE_ON : CODE_OFF;
          i += fence[0].length;
          continue;
        }
        const line = rest.split('\n', 1)[0]!;
        if (
          !final &&
          line.length === rest.length &&
          (UNDECIDED_LINE_START.test(line) || /^[ \t]{0,3}(```|~~~)/.test(line))
        ) {
          this.held = rest; // not yet known what this line is
          return out;
        }
        const heading = this.inFence ? null : HEADING.exec(rest);
        const bullet = this.inFence || heading ? null : BULLET.exec(rest);
        // A marker's spaces running to the end of the chunk may go on in the next one: all of
        // them belong to the marker, however the chunks fall.
        if (!final && (heading ?? bullet)?.[0].length === rest.length) {
          this.held = rest;
          return out;
        }
        this.atLineStart = false;
        if (heading) {
          this.heading = true;
          out += BOLD_ON;
          i += heading[0].length;
          continue;
        }
        if (bullet) {
          out += `${bullet[1]}• `;
          i += bullet[0].length;
          continue;
        }
      }
      const c = text[i]!;
      if (c === '\n') {
        out += this.closeInline() + '\n';
        this.atLineStart = true;
        i += 1;
        continue;
      }
      if (this.inFence) {
        out += c;
        i += 1;
        continue;
      }
      if (c === '`') {
        this.code = !this.code;
        out += this.code ? CODE_ON : CODE_OFF;
        i += 1;
        continue;
      }
      if (c === '*' && !this.code) {
        if (i + 1 >= text.length && !final) {
          this.held = text.slice(i); // `*` or the first half of `**`
          return out;
        }
        if (text[i + 1] === '*') {
          this.bold = !this.bold;
          out += this.bold || this.heading ? BOLD_ON : BOLD_OFF;
          i += 2;
          continue;
        }
      }
      out += c;
      i += 1;
    }
    return out;
  }

  /** Ends the styles of a line. */
  private closeInline(): string {
    let out = '';
    if (this.code) out += CODE_OFF;
    if (this.bold || this.heading) out += BOLD_OFF;
    this.code = false;
    this.bold = false;
    this.heading = false;
    return out;
  }
}
