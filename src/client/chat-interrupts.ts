/**
 * Ctrl+C in the terminal chat (chat.ts). During a turn it asks the agent to end it: `/stop`
 * (CMD-32) where the agent lists it, which keeps the conversation; `CancelTask` otherwise. Asked
 * before the turn's task is known, it is sent once the task is. A second press during the same
 * turn, or two within a second whatever happened between them, leave the chat. At an empty
 * prompt it exits, as Ctrl+D does; with text typed, it drops the text, as a shell does.
 */
import type { ChatInput } from './chat-prompt.js';
import type { ChatScreen } from './chat-screen.js';
import { describeClientError, type Connection } from './connect.js';
import type { TurnReader } from './render.js';

/** How long a canceled turn may take to end before the chat stops waiting for it. */
const CANCEL_GRACE_MS = 5000;

/** Two Ctrl+C this close together leave, whatever the first one did (a turn stopped, and the next one started). */
const DOUBLE_PRESS_MS = 1000;

/** A turn the chat runs: what reads its events, what stops waiting for them, and whether it was asked to end. */
export interface ChatTurn {
  reader: TurnReader;
  abort: AbortController;
  cancel: 'no' | 'wanted' | 'sent';
  timer?: NodeJS.Timeout;
}

/** What Ctrl+C acts on: the chat's running turn, its input, and how it leaves. */
export interface InterruptedChat {
  connection: Connection;
  screen: ChatScreen;
  input: ChatInput;
  /** Milliseconds, for the time between two presses. */
  now(): number;
  /** The turn running now, if any. */
  turn(): ChatTurn | undefined;
  /** Whether messages are being run one after the other (between two of them, no turn runs). */
  draining(): boolean;
  /** Leaves the chat now. */
  leave(): void;
  /** Sends a command to the task of the running turn, answered at once. */
  command(text: string, taskId: string): void;
}

export class ChatInterrupts {
  /** When Ctrl+C was last pressed. */
  private lastPress = -Infinity;

  constructor(private readonly chat: InterruptedChat) {}

  /** Ctrl+C was pressed. */
  press(): void {
    const now = this.chat.now();
    const twice = now - this.lastPress < DOUBLE_PRESS_MS;
    this.lastPress = now;
    // A double press leaves, though the turn it stopped may have ended and a queued one started in between.
    if (twice) return this.chat.leave();
    const turn = this.chat.turn();
    if (turn) {
      // A second Ctrl+C during the same turn leaves (the turn itself was asked to end already).
      if (turn.cancel !== 'no') return this.chat.leave();
      const { screen } = this.chat;
      screen.line(
        screen.style.dim(
          this.canStop ? '^C stopping the turn… (Ctrl+C again leaves)' : '^C canceling the turn… (Ctrl+C again leaves)',
        ),
      );
      turn.cancel = 'wanted';
      turn.timer = setTimeout(() => turn.abort.abort(), CANCEL_GRACE_MS);
      if (turn.reader.taskId) this.endTurn(turn);
      return;
    }
    if (this.chat.draining()) return;
    if (this.chat.input.text === '') {
      this.chat.input.close();
      return;
    }
    // Like a shell: Ctrl+C drops what was typed.
    this.chat.input.clearText();
  }

  /** A turn's event was read: a stop pressed before its task was known is sent now that it is. */
  read(turn: ChatTurn): void {
    if (turn.cancel === 'wanted' && turn.reader.taskId) this.endTurn(turn);
  }

  /** Whether the agent lists `/stop`: then Ctrl+C keeps the conversation; otherwise it cancels the task. */
  private get canStop(): boolean {
    return this.chat.connection.commands.some((command) => command.name === 'stop');
  }

  /** Asks the agent to end the running turn: `/stop` where it can, `CancelTask` otherwise. */
  private endTurn(turn: ChatTurn): void {
    turn.cancel = 'sent';
    if (this.canStop) return this.chat.command('/stop', turn.reader.taskId);
    const { connection, screen } = this.chat;
    connection.client.cancelTask({ tenant: '', id: turn.reader.taskId, metadata: {} }).catch((error: unknown) => {
      if (this.chat.turn() !== turn) return;
      screen.line(screen.style.error(`error: could not cancel: ${describeClientError(error, connection.url)}`));
      turn.abort.abort();
    });
  }
}
