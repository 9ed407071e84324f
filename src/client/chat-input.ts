/**
 * Where the chat reads what the person types: the terminal prompt (`TerminalPrompt`) when both
 * ends are a terminal, else the lines of a pipe, one message each.
 */
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import type { ChatScreen } from './chat-screen.js';
import { commandMenu, tabCompletion } from './completion.js';
import type { CardCommand } from './connect.js';
import { TerminalPrompt, type TerminalPromptEvents } from './terminal-prompt.js';

/** The prompt while the chat waits for a message. */
export const PROMPT = '❯ ';
/** The prompt while a turn runs: a message typed then waits for the turn's end. */
export const BUSY_PROMPT = '… ';

/**
 * The terminal prompt, drawn under what `screen` writes, offering `commands()` as they are typed;
 * lines of a pipe when `input` or the screen is not a terminal.
 */
export function chatInput(
  input: NodeJS.ReadStream,
  screen: ChatScreen,
  commands: () => readonly CardCommand[],
): ChatInput {
  const { output } = screen;
  if (input.isTTY !== true || output.isTTY !== true) return new PipedInput(input);
  const prompt = new TerminalPrompt(input, output, {
    prompt: PROMPT,
    menu: (text) => commandMenu(text, commands(), output.columns ? output.columns - 1 : undefined),
    complete: (text) => tabCompletion(text, commands()),
  });
  screen.attach(prompt);
  return prompt;
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

/** Lines from a pipe or a file: each line a message, nothing drawn. */
export class PipedInput extends EventEmitter<TerminalPromptEvents> implements ChatInput {
  readonly text = '';
  private closed = false;
  private lines: ReturnType<typeof createInterface> | undefined;

  constructor(private readonly input: NodeJS.ReadableStream) {
    super();
  }

  start(): void {
    this.lines = createInterface({ input: this.input, terminal: false });
    this.lines.on('line', (line) => this.emit('line', line));
    this.lines.on('close', () => this.close());
  }

  clearText(): void {}

  setText(): void {}

  choose(): Promise<number | undefined> {
    return Promise.resolve(undefined);
  }

  pressKey(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  askLine(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  setPrompt(): void {}

  redraw(): void {}

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lines?.close();
    this.emit('close');
  }
}
