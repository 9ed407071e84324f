/**
 * Where the chat reads what the person types: the terminal prompt (`TerminalPrompt`) when both
 * ends are a terminal, else the lines of a pipe, one message each.
 */
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import { PROMPT, type ChatInput, type TerminalPromptEvents } from './chat-prompt.js';
import type { ChatScreen } from './chat-screen.js';
import { commandMenu, tabCompletion } from './completion.js';
import type { CardCommand } from './connect.js';
import { TerminalPrompt } from './terminal-prompt.js';

export { BUSY_PROMPT, PROMPT, type ChatInput } from './chat-prompt.js';

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
