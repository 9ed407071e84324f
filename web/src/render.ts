/**
 * Drawing the page: the transcript (your messages, the agent's streamed replies, command replies
 * with their sub-task links, notes), the command list under the input, the one-line error.
 * Text is only ever set as text, never parsed as HTML.
 */
import type { TaskState } from '@a2a-js/sdk';
import { isTerminal, stateName } from '../../src/wire.js';
import type { ChatEvent } from './chat.js';
import type { Completion } from './completion.js';

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
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

  constructor(
    private readonly root: HTMLElement,
    private readonly subtasks: Subtasks,
  ) {}

  clear(): void {
    this.root.replaceChildren();
    this.shown.clear();
  }

  user(text: string): HTMLElement {
    return this.add(element('div', 'msg user', text));
  }

  /** An agent bubble, empty and marked as streaming until {@link finish}. */
  agent(text = ''): HTMLElement {
    const bubble = this.add(element('div', 'msg agent streaming', text));
    bubble.setAttribute('aria-busy', 'true');
    return bubble;
  }

  update(bubble: HTMLElement, text: string): void {
    this.keepingBottom(() => (bubble.textContent = text));
  }

  finish(bubble: HTMLElement): void {
    bubble.classList.remove('streaming');
    bubble.removeAttribute('aria-busy');
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
    if (taskRef) bubble.append(this.subtaskLink(taskRef));
    return this.add(bubble);
  }

  note(text: string, subtaskId?: string): HTMLElement {
    const line = element('div', 'msg note', text);
    if (subtaskId) line.append(this.subtaskLink(subtaskId));
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
      detail.textContent = 'loading…';
      try {
        const { state: now, text } = await this.subtasks.load(id);
        showState(now);
        this.keepingBottom(() => (detail.textContent = text || `No result yet (${stateName(now)}).`));
      } catch (error) {
        detail.textContent = oneLine(error);
      }
    });
    this.subtasks.watch(id, showState).catch(() => undefined);
    box.append(button, state, detail);
    return box;
  }

  private add<T extends HTMLElement>(el: T): T {
    this.keepingBottom(() => this.root.append(el));
    return el;
  }

  private keepingBottom(change: () => void): void {
    const root = this.root;
    const atBottom = root.scrollHeight - root.scrollTop - root.clientHeight < 40;
    change();
    if (atBottom) root.scrollTop = root.scrollHeight;
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
        if (t.firstSight(event.messageId)) t.note(event.text, event.subtaskId);
        return;
      case 'state':
        if (isTerminal(event.state) && stateName(event.state) !== 'completed') {
          t.note(`The task ended (${stateName(event.state)}). Your next message starts a new task in this conversation.`);
        }
        return;
      case 'task':
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

/** The command list under the input, drawn from the completion's state. */
export class CompletionList {
  constructor(
    private readonly list: HTMLElement,
    private readonly input: HTMLElement,
    private readonly onPick: (index: number) => void,
    private readonly onHighlight: (index: number) => void,
  ) {}

  render(completion: Completion): void {
    const items = completion.items;
    this.input.setAttribute('aria-expanded', String(items.length > 0));
    if (items.length === 0) {
      this.list.hidden = true;
      this.list.replaceChildren();
      this.input.removeAttribute('aria-activedescendant');
      return;
    }
    const options = items.map((command, index) => {
      const option = element('li', 'option');
      option.id = `command-option-${index}`;
      option.setAttribute('role', 'option');
      option.dataset['name'] = command.name;
      const active = index === completion.activeIndex;
      option.setAttribute('aria-selected', String(active));
      const head = element('div', 'option-head');
      head.append(element('span', 'option-name', `/${command.name}`));
      if (command.argumentHint) head.append(element('span', 'option-hint', command.argumentHint));
      option.append(head, element('div', 'option-description', command.description));
      // mousedown, not click: the input keeps its focus.
      option.addEventListener('mousedown', (event) => {
        event.preventDefault();
        this.onPick(index);
      });
      option.addEventListener('mousemove', () => {
        if (index !== completion.activeIndex) this.onHighlight(index);
      });
      return option;
    });
    this.list.replaceChildren(...options);
    this.list.hidden = false;
    this.input.setAttribute('aria-activedescendant', `command-option-${completion.activeIndex}`);
    options[completion.activeIndex]?.scrollIntoView({ block: 'nearest' });
  }
}

/** An error as one line: its message's first line, bounded. */
export function oneLine(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  const first = raw.split('\n').find((line) => line.trim()) ?? 'Something went wrong.';
  const line = first.trim();
  return line.length > 240 ? `${line.slice(0, 239)}…` : line;
}

/** Shows `message` in the error line, or hides the line. */
export function showError(el: HTMLElement, message: string | undefined): void {
  el.textContent = message ?? '';
  el.hidden = !message;
}
