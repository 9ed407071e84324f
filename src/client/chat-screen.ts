/**
 * What the terminal chat writes: lines and streamed replies (rendered as Markdown on a
 * terminal), tool-call lines rewritten in place, how a turn ended. On a terminal everything goes
 * above the prompt (`TerminalPrompt`), and a reply's unfinished line is shown in the prompt's
 * area until it ends, so nothing typed is ever spliced into it. Elsewhere it keeps where the
 * cursor is (at the start of a line or not), so a line never starts in the middle of another.
 */
import { stripVTControlCharacters } from 'node:util';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { isTerminal } from '../commands/index.js';
import { PROMPT } from './chat-prompt.js';
import { resultText, stateName, toolCallLine, type Shown, type Style } from './render.js';
import { TerminalMarkdown } from './terminal-markdown.js';
import type { TerminalPrompt } from './terminal-prompt.js';
import { wrapWords } from './text-width.js';
import { contextBar, markLineOf } from './conversation-marks.js';
import { COMMAND_KEY, fromCommandOf, TURN_FAILURE_NOTICES, type SubtaskNote, type ToolCallData } from '../wire.js';
import { CONTEXT_COMMAND, contextReportOf, FORK_COMMAND } from '../conversation-replies.js';

/** `ESC[1A` up a row, `ESC[2K` clear it: a running tool call's line, replaced. */
const BACK_OVER_LINE = '\x1b[1A\r\x1b[2K';

export class ChatScreen {
  private atLineStart = true;
  /** The call whose running line is the last thing written, so that its end can replace it. */
  private runningLine: string | undefined;
  /** The reply streaming now, rendered as light Markdown on a terminal; plain elsewhere. */
  private reply: TerminalMarkdown | undefined;
  /** Lines put aside while a reply's line is unfinished (not on a terminal): written once it ends. */
  private readonly held: string[] = [];
  /** Command replies already shown: the same reply can come both from its turn and from a read of the task. */
  private readonly shownReplies = new Set<string>();

  /** Told of each command reply once it is shown (the chat acts on `/rewind` and `/fork` replies). */
  onCommandReply: (reply: Extract<Shown, { kind: 'command' }>) => void = () => {};

  /** The prompt's area on a terminal: what is written goes above it. */
  private prompt: TerminalPrompt | undefined;

  constructor(
    readonly output: NodeJS.WriteStream,
    readonly style: Style,
  ) {}

  /** From now on, writes go above `prompt`'s area, and a reply's unfinished line is shown in it. */
  attach(prompt: TerminalPrompt): void {
    this.prompt = prompt;
  }

  /**
   * Shows what a turn's events said; a command that started a sub-task hands its id to
   * `onSubtask`, and so does a note about a sub-task, with the note (`ChatSubtasks`).
   */
  show(shown: Shown[], onSubtask: (taskRef: string, note?: SubtaskNote) => void): void {
    for (const item of shown) {
      if (item.kind === 'text') {
        this.writeReply(item.text);
        continue;
      }
      if (item.kind === 'command') {
        // A command typed during the turn: its reply goes between the reply's lines, which go on.
        if (item.messageId) {
          if (this.shownReplies.has(item.messageId)) continue;
          this.shownReplies.add(item.messageId);
        }
        this.aside(this.replyOf(item));
        // A fork's task is the conversation's copy (the chat offers to go on in it), not a sub-task.
        if (item.taskRef && item.name !== FORK_COMMAND) {
          this.aside(this.style.subtask(`sub-task ${item.taskRef} started`));
          onSubtask(item.taskRef);
        }
        this.onCommandReply(item);
        continue;
      }
      if (item.kind === 'mark') {
        this.aside(this.style.dim(item.text));
        continue;
      }
      if (item.kind === 'note') {
        if (item.subtask) onSubtask(item.subtask.id, item.subtask);
        continue;
      }
      this.endReply();
      if (item.kind === 'tool') this.showTool(item.call);
      else if (item.kind === 'notice') this.line(this.style.dim(item.text));
      else if (item.kind === 'end') this.showEnd(item.state, item.text, item.notice);
    }
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
    if (terminal && this.runningLine === call.id && this.atLineStart) this.write(`${BACK_OVER_LINE}${text}\n`);
    else this.line(text);
    this.runningLine = undefined;
  }

  /** A command reply read apart (the rewind list): not shown when a later read of the task carries it. */
  seen(messageId: string): void {
    this.shownReplies.add(messageId);
  }

  /** A task's conversation so far (its history as read), and whether it goes on. */
  history(task: Task): void {
    for (const message of task.history) {
      const text = resultText({ ...task, status: { ...task.status!, message }, artifacts: [] });
      const mark = markLineOf(message);
      if (mark) this.line(this.style.dim(mark));
      else if (!text) continue;
      else if (message.role === Role.ROLE_USER) this.line(this.style.dim(this.typed(fromCommandLabel(message) + text)));
      else if (typeof message.metadata?.[COMMAND_KEY] === 'string')
        this.line(this.commandReply(message.metadata[COMMAND_KEY], text));
      else this.line(this.markdown(text));
    }
    this.line(
      this.style.dim(
        isTerminal(task.status?.state)
          ? `(task ${task.id} has ended: the next message starts a new task in its conversation)`
          : `(resumed task ${task.id})`,
      ),
    );
  }

  /** How a sub-task ended; its result is a reply, rendered as one. */
  subtaskEnded(task: Task): void {
    const result = resultText(task);
    this.aside(this.style.subtask(`sub-task ${task.id} ${stateName(task.status?.state)}${result ? ':' : ''}`));
    if (result) this.aside(this.markdown(result));
  }

  /**
   * A line from outside the reply streaming now (a command's reply, a sub-task's end), put
   * between the reply's lines and never inside one: on a terminal above the reply's unfinished
   * line; elsewhere held until that line ends.
   */
  aside(text: string): void {
    if (this.prompt || this.atLineStart) this.line(text);
    else this.held.push(text);
  }

  /** A message as it was typed, after the prompt; its further lines under its first. */
  typed(text: string): string {
    return PROMPT + text.replace(/\n/g, `\n${' '.repeat(PROMPT.length)}`);
  }

  /** A command's reply as shown: `/context`'s as a bar where the terminal is wide enough, others as {@link commandReply}. */
  private replyOf(item: Extract<Shown, { kind: 'command' }>): string {
    const report = item.name === CONTEXT_COMMAND && this.output.isTTY ? contextReportOf(item.data) : undefined;
    const bar = report && contextBar(report, this.output.columns ?? 80, this.style);
    return bar || this.commandReply(item.name, item.text);
  }

  /** A command's reply, marked with its name, wrapped at word boundaries on a terminal. */
  commandReply(name: string, text: string): string {
    const whole = `[/${name}] ${text}`;
    const lines = this.output.isTTY ? wrapWords(whole, this.output.columns ?? 80) : [whole];
    return lines.map((line) => this.style.command(line)).join('\n');
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

  /** Model output as it streams: on a terminal, through the Markdown rendering, its unfinished line apart. */
  writeReply(text: string): void {
    if (!this.prompt) {
      // Up to its last line break first: what was put aside meanwhile goes there.
      const lineEnd = text.lastIndexOf('\n') + 1;
      this.write(text.slice(0, lineEnd));
      return this.write(text.slice(lineEnd));
    }
    this.reply ??= new TerminalMarkdown({ styled: this.style.colors, columns: this.output.columns });
    this.write(this.reply.push(text));
    this.prompt.setEdge(this.reply.pending());
  }

  /** The streamed reply is over: what the rendering held back, rendered, and its line ended. */
  endReply(): void {
    const reply = this.reply;
    this.reply = undefined;
    if (!reply) return;
    const rest = reply.end();
    this.prompt?.setEdge('');
    if (rest) this.line(rest);
  }

  /** A whole reply as the terminal shows it. */
  markdown(text: string): string {
    if (!this.style.colors) return text;
    const rendering = new TerminalMarkdown({ columns: this.output.columns });
    return rendering.push(text) + rendering.end();
  }

  /** Clears the screen (the prompt's area drawn again at its top). */
  clear(): void {
    this.prompt?.clearScreen();
    this.atLineStart = true;
  }

  write(text: string): void {
    if (!text) return;
    this.runningLine = undefined;
    if (this.prompt) this.prompt.print(text);
    else this.output.write(text);
    // Styles closed after a line's end leave the cursor at the start of a line.
    const visible = stripVTControlCharacters(text);
    if (visible) this.atLineStart = visible.endsWith('\n');
    if (this.atLineStart && this.held.length > 0) {
      const held = this.held.splice(0);
      this.write(held.map((line) => `${line}\n`).join(''));
    }
  }

  line(text: string): void {
    this.endLine();
    this.write(`${text}\n`);
  }

  endLine(): void {
    if (!this.atLineStart) this.write('\n');
  }
}

/** A typed message on one line of a notice, shortened. */
export function oneLineOf(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/** CMD-38: a prompt a command file or skill put in the turn is labelled as the command's, never shown as typed. */
function fromCommandLabel(message: Message): string {
  const from = fromCommandOf(message);
  return from ? `[from ${from.command}] ` : '';
}
