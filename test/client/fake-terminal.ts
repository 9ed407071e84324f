/**
 * The chat run in the test's own process, on a pretend terminal: keys written to its input as a
 * terminal sends them, everything it draws collected, and a clock the test moves. For what a
 * tmux pane cannot pin down: the time between two keys, or what happens with no key pressed.
 */
import { EventEmitter } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { Chat } from '../../src/client/chat.js';
import { readTaskToResume } from '../../src/client/chat-open.js';
import { connect } from '../../src/client/connect.js';
import { waitFor } from '../support/wait.js';

export class FakeTerminal extends EventEmitter<{ written: [] }> {
  /** Everything drawn, escapes and all. */
  drawn = '';
  /** How much was drawn when raw mode went on (keys read one by one, not echoed); undefined while off. */
  rawFrom: number | undefined;
  /** The clock the chat reads; the test sets it. */
  time = 0;
  readonly input: NodeJS.ReadStream;
  readonly output: NodeJS.WriteStream;

  constructor(columns = 120) {
    super();
    const input = new PassThrough() as unknown as NodeJS.ReadStream & { setRawMode(on: boolean): void };
    input.isTTY = true;
    input.setRawMode = (on: boolean) => {
      this.rawFrom = on ? this.drawn.length : undefined;
      return input;
    };
    this.input = input;
    const output = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        this.drawn += chunk.toString('utf8');
        this.emit('written');
        done();
      },
    }) as unknown as NodeJS.WriteStream;
    output.isTTY = true;
    output.columns = columns;
    output.rows = 40;
    this.output = output;
  }

  /** Bytes as the terminal sends them for keys: text, `\r` for Enter, `\x03` for Ctrl+C. */
  press(keys: string): void {
    (this.input as unknown as PassThrough).write(keys);
  }

  /** What was drawn, without the escapes. */
  get text(): string {
    return stripVTControlCharacters(this.drawn);
  }

  /** Resolves once what was drawn passes `test`. */
  async waitFor(what: string, test: (text: string) => boolean): Promise<void> {
    await waitFor(what, this, 'written', () => test(this.text), { seen: () => this.text.slice(-2000) });
  }
}

export interface FakeChat {
  terminal: FakeTerminal;
  /** Resolves with the chat's exit code once it has ended. */
  exited: Promise<number>;
  /** Ends the chat's input, as the end of a terminal does, and waits for it to end. */
  close(): Promise<number>;
}

/** A chat with the agent at `url` on a pretend terminal; in task `taskId` when given, as `--task` opens it. */
export async function fakeChat(url: string, { taskId }: { taskId?: string } = {}): Promise<FakeChat> {
  const terminal = new FakeTerminal();
  const connection = await connect(url, []);
  const chat = new Chat(connection, { input: terminal.input, output: terminal.output, now: () => terminal.time });
  if (taskId) {
    const read = await readTaskToResume(connection, taskId);
    if (!read) throw new Error(`task ${taskId} cannot be read`);
    chat.resume(read.task, read.replySoFar);
  }
  const exited = chat.run();
  return {
    terminal,
    exited,
    close: () => ((terminal.input as unknown as PassThrough).end(), exited),
  };
}
