/**
 * The text being typed at the chat's prompt, as keys edit it: a message of one or more lines.
 * Enter sends it; Alt+Enter, Ctrl+J and a `\` before Enter start a new line; a bracketed paste
 * (the terminal wraps it in `ESC[200~ … ESC[201~`, Node's keypress parser names the two marks)
 * is inserted whole, its line breaks kept, so a pasted block is one message. It knows nothing
 * of the screen: `TerminalPrompt` draws it.
 */

/** A key as `readline.emitKeypressEvents` reports it. */
export interface Key {
  sequence?: string;
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
  shift?: boolean;
}

/** What a key asks of the prompt around the editor. */
export type EditorAction =
  /** The message is done (Enter): the editor is empty again. */
  | { kind: 'submit'; text: string }
  /** Ctrl+C. */
  | { kind: 'interrupt' }
  /** Ctrl+D on an empty message: the end of input. */
  | { kind: 'eof' }
  /** Tab: complete what is typed. */
  | { kind: 'complete' }
  /** Ctrl+L. */
  | { kind: 'clear-screen' }
  /** Escape; `twice` when two came at once (the terminal sent `ESC ESC`). */
  | { kind: 'escape'; twice: boolean }
  /** The text or the cursor moved: draw it again. */
  | { kind: 'changed' }
  | { kind: 'none' };

const NONE: EditorAction = { kind: 'none' };
const CHANGED: EditorAction = { kind: 'changed' };

export class LineEditor {
  /** The message as typed, lines separated by `\n`. */
  text = '';
  /** Where the next character goes, an index into `text`. */
  cursor = 0;
  /** Inside a bracketed paste: every key is text, Enter a line break. */
  pasting = false;
  private readonly history: string[] = [];
  /** Which history entry is shown; `history.length` is the message being written. */
  private historyIndex = 0;
  private draft = '';

  constructor(private readonly historySize = 200) {}

  /** Replaces the message (a completion, a cleared prompt); the cursor goes to its end. */
  set(text: string): void {
    this.text = text;
    this.cursor = text.length;
  }

  key(char: string | undefined, key: Key): EditorAction {
    if (key.name === 'paste-start') {
      this.pasting = true;
      return NONE;
    }
    if (key.name === 'paste-end') {
      this.pasting = false;
      return CHANGED;
    }
    if (this.pasting) return this.paste(char, key);
    if (key.name === 'escape') return { kind: 'escape', twice: key.sequence === '\x1b\x1b' };
    if (key.ctrl) return this.control(key.name);
    if (key.meta) return this.meta(key.name);
    switch (key.name) {
      case 'return':
        return this.enter();
      case 'enter': // Ctrl+J, a line feed
        return this.insert('\n');
      case 'tab':
        return { kind: 'complete' };
      case 'backspace':
        return this.deleteBefore(1);
      case 'delete':
        return this.deleteAfter();
      case 'left':
        return this.moveTo(this.cursor - charBefore(this.text, this.cursor).length);
      case 'right':
        return this.moveTo(this.cursor + charAt(this.text, this.cursor).length);
      case 'home':
        return this.moveTo(this.lineStart());
      case 'end':
        return this.moveTo(this.lineEnd());
      case 'up':
        return this.vertical(-1);
      case 'down':
        return this.vertical(1);
      default:
        return char !== undefined && isPrintable(char) ? this.insert(char) : NONE;
    }
  }

  private paste(char: string | undefined, key: Key): EditorAction {
    if (key.name === 'return' || key.name === 'enter') return this.insert('\n');
    if (key.name === 'tab') return this.insert('\t');
    return char !== undefined && isPrintable(char) ? this.insert(char) : NONE;
  }

  private control(name: string | undefined): EditorAction {
    switch (name) {
      case 'c':
        return { kind: 'interrupt' };
      case 'd':
        return this.text === '' ? { kind: 'eof' } : this.deleteAfter();
      case 'a':
        return this.moveTo(this.lineStart());
      case 'e':
        return this.moveTo(this.lineEnd());
      case 'b':
        return this.key(undefined, { name: 'left' });
      case 'f':
        return this.key(undefined, { name: 'right' });
      case 'h':
        return this.deleteBefore(1);
      case 'u':
        return this.deleteBefore(this.cursor - this.lineStart());
      case 'k':
        this.text = this.text.slice(0, this.cursor) + this.text.slice(this.lineEnd());
        return CHANGED;
      case 'w':
        return this.deleteBefore(this.cursor - this.wordStart());
      case 'l':
        return { kind: 'clear-screen' };
      case 'j':
        return this.insert('\n');
      case 'p':
        return this.vertical(-1);
      case 'n':
        return this.vertical(1);
      default:
        return NONE;
    }
  }

  private meta(name: string | undefined): EditorAction {
    if (name === 'return' || name === 'enter') return this.insert('\n'); // Alt+Enter
    if (name === 'backspace') return this.deleteBefore(this.cursor - this.wordStart());
    if (name === 'b') return this.moveTo(this.wordStart());
    if (name === 'f') return this.moveTo(this.wordEnd());
    return NONE;
  }

  /** Enter sends the message, unless a `\` before the cursor asks for a new line instead (as shells do). */
  private enter(): EditorAction {
    if (this.text.slice(0, this.cursor).endsWith('\\')) {
      this.text = this.text.slice(0, this.cursor - 1) + this.text.slice(this.cursor);
      this.cursor -= 1;
      return this.insert('\n');
    }
    const text = this.text;
    if (text.trim() !== '' && this.history.at(-1) !== text) {
      this.history.push(text);
      if (this.history.length > this.historySize) this.history.shift();
    }
    this.historyIndex = this.history.length;
    this.draft = '';
    this.set('');
    return { kind: 'submit', text };
  }

  private insert(text: string): EditorAction {
    this.text = this.text.slice(0, this.cursor) + text + this.text.slice(this.cursor);
    this.cursor += text.length;
    return CHANGED;
  }

  private deleteBefore(count: number): EditorAction {
    if (count <= 0 || this.cursor === 0) return NONE;
    // One step back is one character, a surrogate pair included.
    const from = count === 1 ? this.cursor - charBefore(this.text, this.cursor).length : this.cursor - count;
    this.text = this.text.slice(0, from) + this.text.slice(this.cursor);
    this.cursor = from;
    return CHANGED;
  }

  private deleteAfter(): EditorAction {
    const next = charAt(this.text, this.cursor);
    if (!next) return NONE;
    this.text = this.text.slice(0, this.cursor) + this.text.slice(this.cursor + next.length);
    return CHANGED;
  }

  private moveTo(index: number): EditorAction {
    const to = Math.max(0, Math.min(this.text.length, index));
    if (to === this.cursor) return NONE;
    this.cursor = to;
    return CHANGED;
  }

  /** Up and down move between the message's lines; past its first or last line, through the history. */
  private vertical(step: -1 | 1): EditorAction {
    const start = this.lineStart();
    const column = this.cursor - start;
    if (step === -1 && start > 0) {
      const previousStart = this.text.lastIndexOf('\n', start - 2) + 1;
      return this.moveTo(Math.min(previousStart + column, start - 1));
    }
    const end = this.lineEnd();
    if (step === 1 && end < this.text.length) {
      const nextEnd = this.text.indexOf('\n', end + 1);
      return this.moveTo(Math.min(end + 1 + column, nextEnd === -1 ? this.text.length : nextEnd));
    }
    const index = this.historyIndex + step;
    if (index < 0 || index > this.history.length) return NONE;
    if (this.historyIndex === this.history.length) this.draft = this.text;
    this.historyIndex = index;
    this.set(index === this.history.length ? this.draft : this.history[index]!);
    return CHANGED;
  }

  private lineStart(): number {
    return this.text.lastIndexOf('\n', this.cursor - 1) + 1;
  }

  private lineEnd(): number {
    const end = this.text.indexOf('\n', this.cursor);
    return end === -1 ? this.text.length : end;
  }

  private wordStart(): number {
    let i = this.cursor;
    while (i > 0 && /\s/.test(this.text[i - 1]!)) i--;
    while (i > 0 && !/\s/.test(this.text[i - 1]!)) i--;
    return i;
  }

  private wordEnd(): number {
    let i = this.cursor;
    while (i < this.text.length && /\s/.test(this.text[i]!)) i++;
    while (i < this.text.length && !/\s/.test(this.text[i]!)) i++;
    return i;
  }
}

/** Not a control character: what a key may insert as text. */
function isPrintable(char: string): boolean {
  // eslint-disable-next-line no-control-regex
  return char.length > 0 && !/[\u0000-\u001f\u007f]/.test(char);
}

function charBefore(text: string, index: number): string {
  return [...text.slice(Math.max(0, index - 2), index)].at(-1) ?? '';
}

function charAt(text: string, index: number): string {
  return [...text.slice(index, index + 2)][0] ?? '';
}
