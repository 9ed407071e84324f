/**
 * Drawing the page: the transcript (your messages, the agent's streamed replies, command replies
 * with their sub-task links, notes, compaction points and rewind marks), the one-line error.
 * Text is only ever set as text, never parsed as HTML, except a model's reply (and a summary a
 * model wrote): that is Markdown, rendered and sanitized in `markdown.ts`.
 */
import type { TaskState } from '@a2a-js/sdk';
import { isTerminal, stateName, type ToolCallData } from '../../src/wire.js';
import { APPROVAL_ANSWERS } from '../../src/approval-answers.js';
import { FORK_COMMAND } from '../../src/conversation-replies.js';
import { markOf } from './conversation-marks.js';
import { element } from './dom.js';
import type { ChatEvent } from './chat.js';
import { renderMarkdown } from './markdown.js';
import { subagentChip } from './subagent-chip.js';
import { questionForm, type ElicitationData, type SendAnswer } from './question-form.js';

/** What the page adds to the transcript's entries (conversation-actions.ts). */
export interface TranscriptExtras {
  /** A user's message was drawn (queued or not). */
  user?(bubble: HTMLElement, text: string): void;
  /** A `/fork` reply named its new task. */
  forked?(bubble: HTMLElement, taskId: string): void;
}

/** What a sub-task link needs: the sub-task's state and result, and its states as they change. */
export interface Subtasks {
  load(id: string): Promise<{ state: TaskState | undefined; text: string }>;
  watch(id: string, onState: (state: TaskState | undefined) => void): Promise<void>;
}

/** The conversation so far. Keeps the view at the bottom while the reader is there. */
export class Transcript {
  /** Messages already shown: a command reply can arrive on two streams (its own and a running turn's). */
  private readonly shown = new Set<string>();
  /** The row of each tool call shown, by call id: a call's later reports update it in place. */
  private readonly toolRows = new Map<string, ToolRow>();
  /** Reply text not drawn yet, by bubble. */
  private readonly undrawn = new Map<HTMLElement, string>();

  /**
   * `answer` sends a message on the task, as if typed: what a waiting call's answer buttons do.
   * `extras` adds to what is drawn: the actions on a user's message, the way to a fork.
   */
  constructor(
    private readonly root: HTMLElement,
    private readonly subtasks: Subtasks,
    private readonly answer: SendAnswer = () => {},
    private readonly extras: TranscriptExtras = {},
  ) {}

  clear(): void {
    this.root.replaceChildren();
    this.shown.clear();
    this.toolRows.clear();
    this.undrawn.clear();
  }

  /**
   * A tool call as a collapsible row: the tool and its status in the summary, its input and
   * output inside; a call waiting for approval has the chat's three answers as buttons
   * (`APPROVAL_ANSWERS`), which send `/approve <id>`, `/approve always <id>`, `/deny <id> <reason>`.
   */
  toolCall(call: ToolCallData): HTMLElement {
    let row = this.toolRows.get(call.id);
    if (!row) {
      row = new ToolRow(call.id, this.answer);
      this.toolRows.set(call.id, row);
      this.add(row.el);
    }
    const el = row.el;
    this.keepingBottom(() => row.show(call));
    return el;
  }

  /** A tool call's question (issue 39): what it asks, and the form (or link) that answers it. */
  question(question: ElicitationData): HTMLElement {
    const entry = element('div', 'msg note question', `${question.server} asks: ${question.message}`);
    entry.append(questionForm(question, this.answer));
    return this.add(entry);
  }

  /**
   * A message the user sent; `queued` when it waits in the task's queue. Queued messages stay
   * last, in the order sent: what the running turn draws meanwhile goes above them.
   */
  user(text: string, queued = false): HTMLElement {
    const bubble = element('div', queued ? 'msg user queued' : 'msg user', text);
    this.extras.user?.(bubble, text);
    if (!queued) return this.add(bubble);
    this.keepingBottom(() => this.root.append(bubble));
    return bubble;
  }

  /** A queued message leaves the queue (its turn starts, or it was refused): placed above the ones still queued. */
  unqueue(bubble: HTMLElement): void {
    bubble.classList.remove('queued');
    if (bubble.parentElement === this.root) this.root.insertBefore(bubble, this.firstQueued());
  }

  private firstQueued(): Element | null {
    return this.root.querySelector(':scope > .msg.user.queued');
  }

  /** An agent bubble, empty and marked as streaming until {@link finish}. */
  agent(text = ''): HTMLElement {
    const bubble = this.add(element('div', 'msg agent streaming', text));
    bubble.setAttribute('aria-busy', 'true');
    return bubble;
  }

  /**
   * A reply's text so far, drawn as Markdown. While it streams, it is drawn at most once a
   * frame: each chunk would otherwise parse the whole reply again.
   */
  update(bubble: HTMLElement, text: string): void {
    const waiting = this.undrawn.has(bubble);
    this.undrawn.set(bubble, text);
    if (!waiting) requestAnimationFrame(() => this.draw(bubble));
  }

  finish(bubble: HTMLElement): void {
    this.draw(bubble);
    bubble.classList.remove('streaming');
    bubble.removeAttribute('aria-busy');
  }

  private draw(bubble: HTMLElement): void {
    const text = this.undrawn.get(bubble);
    if (text === undefined) return;
    this.undrawn.delete(bubble);
    this.keepingBottom(() => renderMarkdown(bubble, text));
  }

  /** A message not yet shown? Marks it shown. */
  firstSight(messageId: string): boolean {
    if (!messageId) return true;
    if (this.shown.has(messageId)) return false;
    this.shown.add(messageId);
    return true;
  }

  command(name: string, text: string, taskRef?: string): HTMLElement {
    const bubble = element('div', 'msg command');
    bubble.dataset['command'] = name;
    bubble.append(element('span', 'badge', `/${name}`), element('div', 'body', text));
    // A fork's task is the conversation's copy, opened in place of this one; other tasks are sub-tasks.
    if (taskRef && name === FORK_COMMAND) this.extras.forked?.(bubble, taskRef);
    else if (taskRef) bubble.append(this.subtaskLink(taskRef));
    return this.add(bubble);
  }

  /**
   * A line of the harness's own; `error` when it says why a turn has no reply. A note about a
   * sub-agent (`agent`) has its chip, which opens the sub-task; another sub-task has its link.
   */
  note(text: string, subtaskId?: string, error = false, agent?: string): HTMLElement {
    const line = element('div', error ? 'msg note error' : 'msg note', text);
    if (error) line.setAttribute('role', 'alert');
    if (subtaskId && agent)
      line.append(subagentChip(subtaskId, agent, (id, onState) => this.subtasks.watch(id, onState)));
    else if (subtaskId) line.append(this.subtaskLink(subtaskId));
    return this.add(line);
  }

  /**
   * A sub-task: a link-like button with the sub-task's state, kept current while it runs;
   * pressing it shows the sub-task's result (or where it has got to) below.
   */
  private subtaskLink(id: string): HTMLElement {
    const box = element('div', 'task-ref');
    box.dataset['taskId'] = id;
    const button = element('button', 'task-ref-link', `↳ sub-task ${id.slice(0, 8)}`);
    button.type = 'button';
    button.title = `Show sub-task ${id}`;
    button.setAttribute('aria-expanded', 'false');
    const state = element('span', 'task-ref-state', '');
    const detail = element('div', 'task-ref-detail');
    detail.hidden = true;
    const showState = (value: TaskState | undefined) => {
      state.textContent = stateName(value);
      box.dataset['state'] = stateName(value);
    };
    button.addEventListener('click', async () => {
      const open = detail.hidden;
      detail.hidden = !open;
      button.setAttribute('aria-expanded', String(open));
      if (!open) return;
      detail.classList.remove('markdown');
      detail.textContent = 'loading…';
      try {
        const { state: now, text } = await this.subtasks.load(id);
        showState(now);
        // The result is the sub-task's model's reply: Markdown, drawn as a reply is.
        this.keepingBottom(() =>
          text ? renderMarkdown(detail, text) : (detail.textContent = `No result yet (${stateName(now)}).`),
        );
      } catch (error) {
        detail.textContent = oneLine(error);
      }
    });
    this.subtasks.watch(id, showState).catch(() => undefined);
    box.append(button, state, detail);
    return box;
  }

  /** Adds an entry after the others (above the queued messages). */
  add<T extends HTMLElement>(el: T): T {
    this.keepingBottom(() => this.root.insertBefore(el, this.firstQueued()));
    return el;
  }

  private keepingBottom(change: () => void): void {
    const root = this.root;
    const atBottom = root.scrollHeight - root.scrollTop - root.clientHeight < 40;
    change();
    if (atBottom) root.scrollTop = root.scrollHeight;
  }
}

/** How much of a call's input or output its row shows; the whole output of a large one is an artifact. */
const TOOL_TEXT_CHARS = 4000;

function bounded(text: string): string {
  return text.length > TOOL_TEXT_CHARS ? `${text.slice(0, TOOL_TEXT_CHARS)}\n…` : text;
}

/** The classes of the answers' buttons, in `APPROVAL_ANSWERS` order (the style marks the first). */
const ANSWER_CLASSES = ['tool-approve', 'tool-always', 'tool-deny'];

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** One tool call's row. */
class ToolRow {
  readonly el = element('details', 'tool-call');
  private readonly name = element('span', 'tool-name');
  private readonly status = element('span', 'tool-status');
  private readonly input = element('pre', 'tool-input');
  private readonly output = element('pre', 'tool-output');
  private readonly actions = element('div', 'tool-actions');

  constructor(
    private readonly id: string,
    private readonly answer: (text: string) => void,
  ) {
    const summary = element('summary');
    summary.append(element('span', 'badge', 'tool'), this.name, this.status);
    this.output.hidden = true;
    this.actions.hidden = true;
    // The chat's three answers (APPROVAL_ANSWERS), one button each; No sends the reason typed beside it.
    const reason = element('input', 'tool-reason');
    reason.placeholder = 'reason (optional)';
    reason.setAttribute('aria-label', 'Reason for no (optional)');
    const buttons = APPROVAL_ANSWERS.map((answer, i) => {
      const button = element('button', ANSWER_CLASSES[i], capitalized(answer.label));
      button.type = 'button';
      button.addEventListener('click', () => {
        for (const b of buttons) b.disabled = true;
        reason.disabled = true;
        this.answer(answer.command(this.id, answer.asksReason ? reason.value.replace(/\s+/g, ' ') : undefined));
      });
      return button;
    });
    // Enter in the reason box answers No, as Enter after the chat's reason line does.
    reason.addEventListener('keydown', (event) => event.key === 'Enter' && buttons.at(-1)!.click());
    this.actions.append(...buttons.slice(0, -1), reason, buttons.at(-1)!);
    this.el.append(summary, this.input, this.output, this.actions);
    this.el.dataset['callId'] = id;
  }

  show(call: ToolCallData): void {
    this.el.dataset['status'] = call.status;
    this.name.textContent = call.tool;
    this.status.textContent = call.status.replace('-', ' ');
    this.input.textContent = bounded(JSON.stringify(call.input ?? {}, null, 2));
    const output =
      call.output === undefined
        ? ''
        : call.outputArtifactId
          ? `${call.output}\n(the whole output is the task's artifact ${call.outputArtifactId})`
          : call.output;
    this.output.textContent = bounded(output);
    this.output.hidden = call.output === undefined;
    const waiting = call.status === 'awaiting-approval';
    this.actions.hidden = !waiting;
    // A call waiting for an answer opens by itself: the buttons must be seen.
    if (waiting) this.el.open = true;
  }
}

/**
 * What one sent message's stream draws: the reply streaming into one bubble (one per artifact),
 * then replaced by the turn's whole reply; command replies and notes as their own entries.
 */
export class TurnView {
  private readonly bubbles = new Map<string, { el: HTMLElement; text: string }>();
  private pending: HTMLElement | undefined;

  /** `expectReply`: an ordinary message, so show a waiting bubble until the reply streams in. */
  constructor(
    private readonly transcript: Transcript,
    expectReply: boolean,
  ) {
    if (expectReply) this.pending = transcript.agent();
  }

  handle(event: ChatEvent): void {
    const t = this.transcript;
    switch (event.kind) {
      case 'chunk': {
        let bubble = this.bubbles.get(event.artifactId);
        if (!bubble) {
          bubble = { el: this.takePending() ?? t.agent(), text: '' };
          this.bubbles.set(event.artifactId, bubble);
        }
        bubble.text = event.append ? bubble.text + event.text : event.text;
        t.update(bubble.el, bubble.text);
        return;
      }
      case 'reply': {
        if (!t.firstSight(event.messageId)) return;
        // The turn's whole reply: it replaces what streamed (the same text, or an error explained).
        const streamed = [...this.bubbles.values()].at(-1);
        const el = streamed?.el ?? this.takePending() ?? t.agent();
        t.update(el, event.text);
        t.finish(el);
        return;
      }
      case 'command':
        if (t.firstSight(event.messageId)) t.command(event.command, event.text, event.taskRef);
        return;
      case 'note':
        if (t.firstSight(event.messageId)) t.note(event.text, event.subtaskId, false, event.agent);
        return;
      case 'tool':
        t.toolCall(event.call);
        return;
      case 'question':
        if (t.firstSight(event.messageId)) t.question(event.question);
        return;
      case 'user':
        if (t.firstSight(event.messageId)) {
          const bubble = t.user(event.text);
          // CMD-38: a command's prompt, shown as the command's, not as the user's words.
          if (event.fromCommand) {
            bubble.classList.add('from-command');
            bubble.dataset.command = `from ${event.fromCommand}`;
          }
        }
        return;
      case 'compaction':
      case 'rewind':
        if (t.firstSight(event.messageId)) t.add(markOf(event));
        return;
      case 'notice':
        if (t.firstSight(event.messageId)) t.note(event.text, undefined, event.error);
        return;
      case 'state':
        if (isTerminal(event.state) && stateName(event.state) !== 'completed') {
          t.note(
            `The task ended (${stateName(event.state)}). Your next message starts a new task in this conversation.`,
          );
        }
        return;
      case 'task':
      case 'queued':
      case 'started':
        return;
    }
  }

  /** The stream ended (or failed): nothing is left marked as streaming, and an empty wait goes. */
  done(): void {
    this.pending?.remove();
    this.pending = undefined;
    for (const { el } of this.bubbles.values()) this.transcript.finish(el);
  }

  private takePending(): HTMLElement | undefined {
    const el = this.pending;
    this.pending = undefined;
    return el;
  }
}

/** An error as one line: its message's first line, bounded. */
export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // Whatever answered in the harness's place (a proxy's error page) is never shown.
  const raw = message.replace(/\.?\s*Response:\s*<[\s\S]*$/i, '.');
  const first = raw.split('\n').find((line) => line.trim()) ?? 'Something went wrong.';
  const line = first.trim();
  return line.length > 240 ? `${line.slice(0, 239)}…` : line;
}

/** Shows `message` in the error line, or hides the line. */
export function showError(el: HTMLElement, message: string | undefined): void {
  el.textContent = message ?? '';
  el.hidden = !message;
}
