/**
 * What the chat needs of its input, on a terminal or not, and the prompts it shows: the contract
 * shared by the terminal prompt, the piped input and the screen that draws above them.
 */
import type { EventEmitter } from 'node:events';

/** The prompt while the chat waits for a message. */
export const PROMPT = '❯ ';
/** The prompt while a turn runs: a message typed then waits for the turn's end. */
export const BUSY_PROMPT = '… ';

export interface TerminalPromptEvents {
  /** A message was sent (Enter). */
  line: [text: string];
  /** A key changed what is typed (not a paste until its end). */
  edit: [text: string];
  /** Ctrl+C. */
  interrupt: [];
  /** Escape; `twice` when the terminal sent two at once. */
  escape: [twice: boolean];
  /** Ctrl+D on an empty prompt, or the end of input. */
  close: [];
}

/** What the chat needs of its input, on a terminal or not. */
export interface ChatInput extends EventEmitter<TerminalPromptEvents> {
  /** Starts reading (and, on a terminal, shows the prompt). */
  start(): void;
  /** What is typed and not sent yet. */
  readonly text: string;
  /** Drops what is typed. */
  clearText(): void;
  /** Puts text in the prompt to edit and send (nothing on a pipe). */
  setText(text: string): void;
  /** A choice among `rows` drawn under the prompt: the index chosen, or undefined (always, on a pipe). */
  choose(heading: string, rows: readonly string[]): Promise<number | undefined>;
  /** Lines under the prompt answered by one of `keys`: the key, or undefined (another key; always, on a pipe). */
  pressKey(lines: readonly string[], keys: readonly string[]): Promise<string | undefined>;
  /** One line read after its own prompt: the line, or undefined (Esc, Ctrl+C; always, on a pipe). */
  askLine(prompt: string): Promise<string | undefined>;
  /** The prompt to show: one when the chat waits for a message, another while a turn runs. */
  setPrompt(prompt: string): void;
  /** Draws the prompt again, with the menu for the commands offered now. */
  redraw(): void;
  /** Stops reading; emits `close` once. */
  close(): void;
}
