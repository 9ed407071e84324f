/**
 * The terminal chat's keys and offers for the conversation extension: Esc Esc lists the points
 * `/rewind` can take the conversation back to, newest first, to choose one with the arrow keys
 * and Enter; choosing sends `/rewind n`, and its reply puts that message's text back in the
 * prompt. After `/fork`, the chat offers to go on in the new task. What is drawn for the
 * replies (the `/context` bar, the dividers) is conversation-marks.ts's.
 */
import type { Task } from '@a2a-js/sdk';
import type { ChatInput } from './chat-input.js';
import type { ChatScreen } from './chat-screen.js';
import { compactionLine, rewindLine } from './conversation-marks.js';
import { describeClientError, userMessage, type Connection } from './connect.js';
import { textOf, type Shown } from './render.js';
import { COMPACTION_KEY, compactionOf, commandReplyError, REPLY_ERROR_KEY, type CompactionPoint } from '../wire.js';
import {
  COMPACT_COMMAND,
  dataOf,
  FORK_COMMAND,
  forkedOf,
  REWIND_COMMAND,
  rewindChoicesOf,
  rewoundOf,
} from '../conversation-replies.js';

/** Two Escape presses this close together are Esc Esc (a terminal sends two quick ones at once). */
const DOUBLE_ESCAPE_MS = 1000;

/** How many messages of a forked task are shown when the chat goes on in it (as `--resume` shows). */
const SHOWN_OF_FORK = 40;

/** What the actions need of the chat. */
export interface ChatHost {
  readonly connection: Connection;
  readonly screen: ChatScreen;
  readonly input: ChatInput;
  readonly now: () => number;
  /** The conversation's task and context ('' before the first message). */
  ids(): { taskId: string; contextId: string };
  /** A turn runs, or messages wait for one. */
  busy(): boolean;
  /** Resolves once no turn runs and no message waits. */
  idle(): Promise<void>;
  /** Sends `text` (shown first, as typed). */
  send(text: string): void;
  /** Goes on in `task`, its conversation shown first. */
  resume(task: Task): void;
}

type CommandReply = Extract<Shown, { kind: 'command' }>;

export class ConversationActions {
  private lastEscape = -Infinity;
  /** A choice is open (the rewind list, the fork offer): another Esc Esc waits for it. */
  private choosing = false;

  constructor(private readonly host: ChatHost) {}

  /** Escape was pressed (`twice`: two at once): a second one soon after the first opens the rewind list. */
  escape(twice: boolean): void {
    const now = this.host.now();
    const double = twice || now - this.lastEscape < DOUBLE_ESCAPE_MS;
    this.lastEscape = double ? -Infinity : now;
    if (double && !this.choosing) void this.rewindList();
  }

  /** A command's reply was shown: a rewind's text goes back in the prompt; a fork is offered. */
  replied(reply: CommandReply): void {
    if (typeof reply.data?.[REPLY_ERROR_KEY] === 'string') return; // refused: its text says why
    const { screen, input } = this.host;
    const rewound = reply.name === REWIND_COMMAND ? rewoundOf(reply.data) : undefined;
    if (rewound) {
      screen.line(screen.style.dim(rewindLine(rewound.hidden)));
      input.setText(input.text ? `${input.text}\n${rewound.text}` : rewound.text);
    }
    const point = reply.name === COMPACT_COMMAND ? compactionIn(reply.data) : undefined;
    if (point) screen.line(screen.style.dim(compactionLine(point)));
    const fork = reply.name === FORK_COMMAND ? (forkedOf(reply.data)?.taskId ?? reply.taskRef) : undefined;
    if (fork) void this.offerFork(fork);
  }

  /** Sends `/rewind`, shows its points as a choice, and sends `/rewind n` for the one chosen. */
  private async rewindList(): Promise<void> {
    const { screen, connection } = this.host;
    const say = (text: string) => screen.line(screen.style.dim(text));
    const { taskId, contextId } = this.host.ids();
    if (!connection.commands.some((c) => c.name === REWIND_COMMAND))
      return say('(this agent has no /rewind: Esc Esc cannot take the conversation back)');
    if (!taskId && contextId) return say('(nothing to rewind: the task has ended; the next message starts a new one)');
    if (!taskId) return say('(nothing to rewind: the conversation has no messages yet)');
    if (this.host.busy()) return say('(a turn is running: Ctrl+C stops it; then Esc Esc rewinds)');
    this.choosing = true;
    try {
      const result = await connection.client.sendMessage({
        tenant: '',
        message: userMessage(`/${REWIND_COMMAND}`, { taskId, contextId }),
        configuration: undefined,
        metadata: {},
      });
      const reply = 'status' in result ? result.status?.message : result;
      if (reply) screen.seen(reply.messageId);
      const points = rewindChoicesOf(dataOf(reply?.parts));
      if (points.length === 0 || commandReplyError(reply)) return void screen.line(screen.commandReply(REWIND_COMMAND, textOf(reply))); // prettier-ignore
      const rows = points.map((point) => `${point.n}. ${point.preview || point.text.split('\n')[0]}`);
      const chosen = await this.host.input.choose('Rewind to before: ↑/↓ choose, Enter rewinds, Esc keeps all', rows);
      if (chosen === undefined) return;
      const command = `/${REWIND_COMMAND} ${points[chosen]!.n}`;
      screen.line(screen.style.dim(screen.typed(command)));
      this.host.send(command);
    } catch (error) {
      screen.line(screen.style.error(`error: ${describeClientError(error, connection.url)}`));
    } finally {
      this.choosing = false;
    }
  }

  /** Once the fork's reply is over, asks whether to go on in the new task (on a pipe, says how to). */
  private async offerFork(forkId: string): Promise<void> {
    const { screen, connection, input } = this.host;
    const resume = `npx tiny-harness chat ${connection.url} --task ${forkId}`;
    await this.host.idle();
    const from = this.host.ids().taskId;
    if (this.choosing || this.host.busy()) return screen.line(screen.style.dim(`(forked: go on in it with ${resume})`));
    this.choosing = true;
    const chosen = await input.choose(`Go on in the forked task ${forkId}?`, [
      'Yes: the chat goes on in the new task',
      'No: stay in this one',
    ]);
    this.choosing = false;
    if (chosen !== 0) return screen.line(screen.style.dim(`(staying here; the fork is task ${forkId}: ${resume})`));
    try {
      const task = await connection.client.getTask({ tenant: '', id: forkId, historyLength: SHOWN_OF_FORK });
      screen.line(screen.style.dim(`(switched to task ${forkId}, forked from ${from || 'this conversation'})`));
      this.host.resume(task);
    } catch (error) {
      screen.line(
        screen.style.error(`error: cannot open task ${forkId}: ${describeClientError(error, connection.url)}`),
      );
    }
  }
}

/** The compaction point a `/compact` reply reports (`{compaction}`). */
function compactionIn(data: Record<string, unknown> | undefined): CompactionPoint | undefined {
  return compactionOf({ metadata: { [COMPACTION_KEY]: data?.compaction } });
}
