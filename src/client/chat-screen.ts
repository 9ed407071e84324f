/**
 * What the terminal chat writes: lines and streamed replies (rendered as light Markdown on a
 * terminal), tool-call lines rewritten in place, how a turn ended. It keeps where the cursor is
 * (at the start of a line or not), so a line never starts in the middle of another.
 */
import { clearLine, cursorTo, moveCursor } from 'node:readline';
import { stripVTControlCharacters } from 'node:util';
import { TaskState } from '@a2a-js/sdk';
import { stateName, type Shown, type Style } from './render.js';
import { TerminalMarkdown } from './terminal-markdown.js';
import { toolCallLine, TURN_FAILURE_NOTICES, type ToolCallData } from '../wire.js';

export class ChatScreen {
  private atLineStart = true;
  /** The call whose running line is the last thing written, so that its end can replace it. */
  private runningLine: string | undefined;
  /** The reply streaming now, rendered as light Markdown on a terminal; plain elsewhere. */
  private reply: TerminalMarkdown | undefined;
  /** Command replies already shown: the same reply can come both from its turn and from a read of the task. */
  private readonly shownReplies = new Set<string>();

  constructor(
    readonly output: NodeJS.WriteStream,
    readonly style: Style,
  ) {}

  /** Shows what a turn's events said; a command that started a sub-task hands its id to `onSubtask`. */
  show(shown: Shown[], onSubtask: (taskRef: string) => void): void {
    for (const item of shown) {
      if (item.kind === 'text') {
        this.writeReply(item.text);
        continue;
      }
      this.endReply();
      if (item.kind === 'command') {
        if (item.messageId) {
          if (this.shownReplies.has(item.messageId)) continue;
          this.shownReplies.add(item.messageId);
        }
        this.line(this.style.command(`[/${item.name}] ${item.text}`));
        if (item.taskRef) {
          this.line(this.style.subtask(`sub-task ${item.taskRef} started`));
          onSubtask(item.taskRef);
        }
      } else if (item.kind === 'tool') this.showTool(item.call);
      else if (item.kind === 'end') this.showEnd(item.state, item.text, item.notice);
      // 'note': sub-tasks are followed by the chat, which says when each one ends.
    }
  }

  /** Enter moved the cursor to a new line (typed while a turn was printing, say). */
  enterPressed(): void {
    this.atLineStart = true;
  }

  /**
   * One line per call: on a terminal, the line of a running call is rewritten in place when the
   * call ends, if nothing was written after it; elsewhere only how each call ended is written.
   */
  showTool(call: ToolCallData): void {
    const text = this.style.dim(`⚙ ${toolCallLine(call, Math.max(40, (this.output.columns ?? 100) - 30))}`);
    const terminal = this.output.isTTY === true;
    if (call.status === 'running') {
      if (!terminal) return;
      this.line(text);
      this.runningLine = call.id;
      return;
    }
    if (terminal && this.runningLine === call.id && this.atLineStart) {
      moveCursor(this.output, 0, -1);
      clearLine(this.output, 0);
      cursorTo(this.output, 0);
      this.write(`${text}\n`);
    } else {
      this.line(text);
    }
    this.runningLine = undefined;
  }

  showEnd(state: TaskState, text: string, notice?: string): void {
    if (notice !== undefined && TURN_FAILURE_NOTICES.has(notice)) {
      // Not the assistant speaking: the harness saying why there is no reply.
      this.line(this.style.error(text));
    } else if (state === TaskState.TASK_STATE_CANCELED) {
      this.line(this.style.dim('(turn canceled; the next message starts a new task)'));
    } else if (state === TaskState.TASK_STATE_FAILED || state === TaskState.TASK_STATE_REJECTED) {
      this.line(this.style.error(`the task ${stateName(state)}${text ? `: ${text}` : ''}`));
      this.line(this.style.dim('(the next message starts a new task)'));
    } else if (text) {
      this.line(this.markdown(text));
    }
  }

  /** Model output as it streams: on a terminal, through the light Markdown rendering. */
  writeReply(text: string): void {
    if (!this.style.colors) return this.write(text);
    this.reply ??= new TerminalMarkdown();
    this.write(this.reply.push(text));
  }

  /** The streamed reply is over: what the rendering held back, and its styles closed. */
  endReply(): void {
    const reply = this.reply;
    this.reply = undefined;
    if (reply) this.write(reply.end());
  }

  /** A whole reply as the terminal shows it. */
  markdown(text: string): string {
    if (!this.style.colors) return text;
    const rendering = new TerminalMarkdown();
    return rendering.push(text) + rendering.end();
  }

  write(text: string): void {
    if (!text) return;
    this.runningLine = undefined;
    this.output.write(text);
    // Styles closed after a line's end leave the cursor at the start of a line.
    const visible = stripVTControlCharacters(text);
    if (visible) this.atLineStart = visible.endsWith('\n');
  }

  line(text: string): void {
    this.endLine();
    this.write(`${text}\n`);
  }

  endLine(): void {
    if (!this.atLineStart) this.write('\n');
  }
}
