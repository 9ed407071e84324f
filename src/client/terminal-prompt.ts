/**
 * The bottom of the chat's terminal, kept apart from what is printed above it: the unfinished
 * line of a streaming reply, the prompt with the message being typed (`LineEditor`), and the
 * menu of matching commands under it. Each change erases the rows it drew and draws them again,
 * so what streams never mixes with what is typed, and one menu updates in place. Everything
 * else is printed above it through {@link TerminalPrompt.print}.
 *
 * Keys come from Node's keypress parser in raw mode, with bracketed paste switched on
 * (`ESC[?2004h`) so that a paste arrives as one piece. Widths are the columns a character takes
 * on screen: two for a wide character (CJK, most emoji).
 */
import { EventEmitter } from 'node:events';
import { emitKeypressEvents } from 'node:readline';
import type { ChatInput, TerminalPromptEvents } from './chat-prompt.js';
import { LineEditor, type Key } from './line-editor.js';
import { columnsOf, fit, rowsOf } from './text-width.js';

const PASTE_ON = '\x1b[?2004h';
const PASTE_OFF = '\x1b[?2004l';
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';
const CLEAR_BELOW = '\x1b[J';

export interface PromptOptions {
  /** The prompt before the message's first line. */
  prompt: string;
  /** Lines to show under the message (the slash menu) for what is typed; none to show nothing. */
  menu(text: string): string[];
  /** What Tab makes of what is typed; `undefined` leaves it as it is. */
  complete(text: string): string | undefined;
}

export class TerminalPrompt extends EventEmitter<TerminalPromptEvents> implements ChatInput {
  private readonly editor = new LineEditor();
  /** The unfinished line (or held block) of what streams, drawn above the prompt. */
  private edge = '';
  /** Which of the drawn rows the cursor is on, counted from the first. */
  private cursorRow = 0;
  private drawn = false;
  /** Drawn only once started: what is printed before goes to the screen as it is. */
  private started = false;
  private closed = false;
  /** A choice drawn in place of the menu, which takes the keys until it is made (`choose`). */
  private choice: Choice | undefined;
  /** Lines drawn in place of the menu, answered by the next key (`pressKey`). */
  private keyQuestion: KeyQuestion | undefined;
  /** A line asked for with a prompt of its own (`askLine`), what was typed before kept aside. */
  private lineQuestion: LineQuestion | undefined;
  private readonly onKey = (char: string | undefined, key: Key | undefined) => this.key(char, key ?? {});
  private readonly onEnd = () => this.close();
  private readonly onResize = () => this.redraw();

  constructor(
    private readonly input: NodeJS.ReadStream,
    private readonly output: NodeJS.WriteStream,
    private options: PromptOptions,
  ) {
    super();
  }

  start(): void {
    emitKeypressEvents(this.input);
    this.input.setRawMode(true);
    this.input.on('keypress', this.onKey);
    this.input.on('end', this.onEnd);
    this.output.on('resize', this.onResize);
    this.input.resume();
    this.output.write(PASTE_ON);
    this.started = true;
    this.draw();
  }

  /** What is typed so far. */
  get text(): string {
    return this.editor.text;
  }

  /** Drops what is typed (Ctrl+C at a prompt with text, as a shell does). */
  clearText(): void {
    this.editor.set('');
    this.redraw();
  }

  /** Puts `text` in the prompt, the cursor at its end (a message taken back by a rewind). */
  setText(text: string): void {
    this.editor.set(text);
    this.redraw();
    this.emit('edit', text);
  }

  /**
   * Draws `rows` under the prompt, one chosen (↑/↓ move, Enter takes it, Esc or Ctrl+C takes
   * none), and resolves with the index chosen. Keys go to the choice until it is made.
   */
  choose(heading: string, rows: readonly string[]): Promise<number | undefined> {
    this.choice?.done(undefined);
    if (this.closed || rows.length === 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const choice: Choice = {
        heading,
        rows,
        chosen: 0,
        done: (index) => {
          if (this.choice === choice) this.choice = undefined;
          this.redraw();
          resolve(index);
        },
      };
      this.choice = choice;
      this.redraw();
    });
  }

  /**
   * Draws `lines` under the prompt and resolves with the next key pressed, when it is one of
   * `keys` (either case). Any other key resolves undefined and goes on to the prompt as typed;
   * Esc and Ctrl+C only end the question.
   */
  pressKey(lines: readonly string[], keys: readonly string[]): Promise<string | undefined> {
    this.keyQuestion?.done(undefined);
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const question: KeyQuestion = {
        lines,
        keys,
        done: (key) => {
          if (this.keyQuestion === question) this.keyQuestion = undefined;
          this.redraw();
          resolve(key);
        },
      };
      this.keyQuestion = question;
      this.redraw();
    });
  }

  /**
   * Reads one line after `prompt` (Enter ends it; no menu, no completion), what was typed before
   * put back after it; undefined on Esc or Ctrl+C.
   */
  askLine(prompt: string): Promise<string | undefined> {
    this.lineQuestion?.done(undefined);
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const before = this.editor.text;
      this.editor.set('');
      const question: LineQuestion = {
        prompt,
        done: (line) => {
          if (this.lineQuestion !== question) return;
          this.lineQuestion = undefined;
          this.editor.set(before);
          this.redraw();
          resolve(line);
        },
      };
      this.lineQuestion = question;
      this.redraw();
    });
  }

  setPrompt(prompt: string): void {
    if (prompt === this.options.prompt) return;
    this.options = { ...this.options, prompt };
    this.redraw();
  }

  /** Shows what streams but has not ended its line yet; '' when nothing. */
  setEdge(text: string): void {
    if (text === this.edge) return;
    this.edge = text;
    this.redraw();
  }

  /** Prints text above the prompt; it should end its last line. */
  print(text: string): void {
    if (!text) return;
    if (this.closed || !this.started) return void this.output.write(text);
    this.output.write(HIDE_CURSOR + this.erase() + text.replace(/\r?\n/g, '\r\n') + this.render() + SHOW_CURSOR);
  }

  /** Clears the screen and draws the prompt at its top. */
  clearScreen(): void {
    this.output.write('\x1b[H\x1b[2J\x1b[3J');
    this.drawn = false;
    this.draw();
  }

  /** Erases the prompt and gives the terminal back: no raw mode, no bracketed paste. Emits `close` once. */
  close(): void {
    if (this.closed) return;
    this.output.write(this.erase() + PASTE_OFF); // the edge is the reply's: its end prints it
    this.closed = true;
    this.input.off('keypress', this.onKey);
    this.input.off('end', this.onEnd);
    this.output.off('resize', this.onResize);
    this.choice?.done(undefined);
    this.keyQuestion?.done(undefined);
    this.lineQuestion?.done(undefined);
    if (this.input.isTTY) this.input.setRawMode(false);
    this.input.pause();
    this.emit('close');
  }

  private key(char: string | undefined, key: Key): void {
    if (this.closed) return;
    if (this.choice) return this.chooseKey(this.choice, key);
    if (this.keyQuestion && !this.editor.pasting) {
      const pressed = char?.toLowerCase();
      const answer = this.keyQuestion.keys.find((k) => k.toLowerCase() === pressed);
      this.keyQuestion.done(answer);
      if (answer !== undefined || key.name === 'escape' || (key.ctrl && key.name === 'c')) return;
    }
    const action = this.editor.key(char, key);
    const question = this.lineQuestion;
    switch (action.kind) {
      case 'submit':
        if (question) return question.done(action.text);
        this.redraw();
        this.emit('line', action.text);
        return;
      case 'interrupt':
        if (question) return question.done(undefined);
        this.emit('interrupt');
        return;
      case 'eof':
        this.close();
        return;
      case 'clear-screen':
        this.clearScreen();
        return;
      case 'escape':
        if (question) return question.done(undefined);
        this.emit('escape', action.twice);
        return;
      case 'complete': {
        if (question) return;
        const completed = this.options.complete(this.editor.text.slice(0, this.editor.cursor));
        if (completed === undefined) return;
        this.editor.set(completed + this.editor.text.slice(this.editor.cursor));
        this.editor.cursor = completed.length;
        this.redraw();
        return;
      }
      case 'changed':
        // A paste is drawn once, at its end.
        if (this.editor.pasting) return;
        this.redraw();
        if (!question) this.emit('edit', this.editor.text);
        return;
      case 'none':
        return;
    }
  }

  private chooseKey(choice: Choice, key: Key): void {
    const name = key.ctrl ? `C-${key.name}` : key.name;
    const count = choice.rows.length;
    if (name === 'up' || name === 'C-p') choice.chosen = (choice.chosen + count - 1) % count;
    else if (name === 'down' || name === 'C-n') choice.chosen = (choice.chosen + 1) % count;
    else if (name === 'return') return choice.done(choice.chosen);
    else if (name === 'escape' || name === 'C-c') return choice.done(undefined);
    else return;
    this.redraw();
  }

  /** Draws the prompt's area again: the menu for what is typed may have changed (the card was read again). */
  redraw(): void {
    if (this.closed) return;
    this.output.write(HIDE_CURSOR + this.erase() + this.render() + SHOW_CURSOR);
  }

  private draw(): void {
    this.output.write(this.render());
  }

  /** Moves to the first row drawn and clears from there down. */
  private erase(): string {
    if (!this.drawn) return '';
    this.drawn = false;
    const up = this.cursorRow > 0 ? `\x1b[${this.cursorRow}A` : '';
    this.cursorRow = 0;
    return `\r${up}${CLEAR_BELOW}`;
  }

  /**
   * The rows to draw, from the cursor at the start of a row; leaves the cursor where the editor's
   * is. Every row is cut here, to the columns it takes on screen (`text-width.ts`), and ended with
   * a line break, so the terminal never wraps one by itself and the cursor's place is known.
   */
  private render(): string {
    if (this.closed || !this.started) return '';
    const columns = Math.max(10, this.output.columns ?? 80);
    const rows: string[] = [];
    if (this.edge) for (const line of this.edge.split('\n')) rows.push(...rowsOf(line, columns));
    const prompt = this.lineQuestion?.prompt ?? this.options.prompt;
    const indent = ' '.repeat(columnsOf(prompt));
    const typed = this.editor.text.replace(/\t/g, ' ');
    const lines = typed.split('\n').map((line, i) => `${i === 0 ? prompt : indent}${line}`);
    // The editor's cursor: the typed line it is on, and the rows up to the character after it
    // (a space at the end): where that character sits, a wide one moved to the next row if need be.
    const before = typed.slice(0, this.editor.cursor).split('\n');
    const cursorLine = before.length - 1;
    const next = [...typed.slice(this.editor.cursor)][0];
    const after = next === undefined || next === '\n' ? ' ' : next;
    const upToNext = rowsOf(`${cursorLine === 0 ? prompt : indent}${before.at(-1)!}${after}`, columns);
    let cursorRow = 0;
    lines.forEach((line, i) => {
      const lineRows = rowsOf(line, columns);
      if (i === cursorLine) {
        cursorRow = rows.length + upToNext.length - 1;
        // A line that fills its last row exactly, the cursor at its end: the cursor on a row of its own.
        while (lineRows.length < upToNext.length) lineRows.push('');
      }
      rows.push(...lineRows);
    });
    const cursorColumn = columnsOf(upToNext.at(-1)!) - columnsOf(after);
    if (this.choice) rows.push(...choiceRows(this.choice, columns - 1));
    else if (this.keyQuestion) for (const line of this.keyQuestion.lines) rows.push(fit(line, columns - 1));
    else if (!this.lineQuestion)
      for (const line of this.options.menu(this.editor.text)) rows.push(`\x1b[2m${fit(line, columns - 1)}\x1b[0m`);

    const up = rows.length - 1 - cursorRow;
    const out =
      rows.join('\r\n') + (up > 0 ? `\x1b[${up}A` : '') + '\r' + (cursorColumn > 0 ? `\x1b[${cursorColumn}C` : '');
    this.cursorRow = cursorRow;
    this.drawn = true;
    return out;
  }
}

/** A choice drawn under the prompt (`TerminalPrompt.choose`). */
interface Choice {
  heading: string;
  rows: readonly string[];
  chosen: number;
  done(index: number | undefined): void;
}

/** Lines answered by one key (`TerminalPrompt.pressKey`). */
interface KeyQuestion {
  lines: readonly string[];
  keys: readonly string[];
  done(key: string | undefined): void;
}

/** One line asked for (`TerminalPrompt.askLine`). */
interface LineQuestion {
  prompt: string;
  done(line: string | undefined): void;
}

/** The choice's rows: its heading, then one row each, the chosen one marked (at most 20 shown). */
function choiceRows(choice: Choice, columns: number): string[] {
  const first = Math.max(0, Math.min(choice.chosen - 19, choice.rows.length - 20));
  const shown = choice.rows.slice(first, first + 20).map((row, i) => {
    const chosen = first + i === choice.chosen;
    return chosen ? `\x1b[36m${fit(`❯ ${row}`, columns)}\x1b[0m` : fit(`  ${row}`, columns);
  });
  return [`\x1b[2m${fit(choice.heading, columns)}\x1b[0m`, ...shown];
}
