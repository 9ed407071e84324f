/**
 * The page's actions on a conversation's messages (the conversation extension): "rewind to
 * here" on each message of yours sends `/rewind n` for it, draws the conversation again as
 * `GetTask` now has it (the messages taken back hidden) and puts the message back in the input;
 * "fork from here" sends `/fork n`, opens the new task, and puts the message in its input. A
 * message's n is its rank among your messages that are not commands, newest first (1), as the
 * harness counts them. A `/fork` typed gets a button that opens its task.
 */
import type { Message } from '@a2a-js/sdk';
import { REPLY_ERROR_KEY, splitCommandText, TASK_REF_KEY, textOf } from '../../src/wire.js';
import { dataOf, FORK_COMMAND, forkedOf, REWIND_COMMAND, rewoundOf } from '../../src/conversation-replies.js';
import { element } from './dom.js';
import { oneLine, type TranscriptExtras } from './render.js';

/** What the actions need of the page. */
export interface ActionsPage {
  /** The agent lists the command. */
  offers(command: string): boolean;
  /** The conversation's task, while it can take commands (none once it has ended). */
  taskId(): string | undefined;
  /** Something streams, or a turn runs. */
  busy(): boolean;
  /** Sends a command on the task; its reply. */
  command(text: string): Promise<Message | undefined>;
  /** Draws a task's conversation as `GetTask` has it, in place of what is drawn. */
  open(taskId: string): Promise<void>;
  /** Puts text in the input. */
  setText(text: string): void;
  /** Shows a one-line error, or hides the line. */
  error(message: string | undefined): void;
}

export class ConversationActions implements TranscriptExtras {
  /** Each user message's text, as sent (its bubble's text also holds the buttons'). */
  private readonly texts = new WeakMap<HTMLElement, string>();

  constructor(
    private readonly root: HTMLElement,
    private readonly page: ActionsPage,
  ) {}

  /** A message of yours that is not a command gets the two actions (hidden while it is queued). */
  user(bubble: HTMLElement, text: string): void {
    const name = splitCommandText(text)?.name;
    if (name && this.page.offers(name)) return;
    this.texts.set(bubble, text);
    bubble.classList.add('rewindable');
    const actions = element('span', 'msg-actions');
    if (this.page.offers(REWIND_COMMAND)) actions.append(this.button('rewind-here', 'rewind to here', bubble));
    if (this.page.offers(FORK_COMMAND)) actions.append(this.button('fork-here', 'fork from here', bubble));
    if (actions.childElementCount > 0) bubble.append(actions);
  }

  /** A `/fork` typed: a button that opens its task. */
  forked(bubble: HTMLElement, taskId: string): void {
    const open = element('button', 'open-fork', `↳ open the fork (task ${taskId.slice(0, 8)})`);
    open.type = 'button';
    open.addEventListener('click', () => void this.page.open(taskId));
    bubble.append(open);
  }

  /** An action's button; its label is drawn by the style sheet, so that the message's text stays its own. */
  private button(className: string, label: string, bubble: HTMLElement): HTMLButtonElement {
    const button = element('button', className);
    button.type = 'button';
    button.setAttribute('aria-label', label);
    button.title = label;
    button.addEventListener('click', () => void this.act(className === 'fork-here' ? 'fork' : 'rewind', bubble));
    return button;
  }

  /** The message's n: its rank among the messages of yours drawn that are not commands, newest 1. */
  private rankOf(bubble: HTMLElement): number {
    const mine = [...this.root.querySelectorAll<HTMLElement>('.msg.user.rewindable:not(.queued)')];
    return mine.length - mine.indexOf(bubble);
  }

  /** An action is on its way: another waits for its end (a double click rewinds once). */
  private acting = false;

  private async act(what: 'rewind' | 'fork', bubble: HTMLElement): Promise<void> {
    if (this.acting) return;
    this.acting = true;
    try {
      await this.run(what, bubble);
    } finally {
      this.acting = false;
    }
  }

  private async run(what: 'rewind' | 'fork', bubble: HTMLElement): Promise<void> {
    const { page } = this;
    const taskId = page.taskId();
    if (page.busy()) return page.error(`A turn is running: stop it, or wait for its end, before you ${what}.`);
    if (!taskId || !bubble.isConnected || bubble.classList.contains('queued'))
      return page.error(`This message can no longer be taken back: its conversation has ended.`);
    const text = this.texts.get(bubble) ?? '';
    const command = `/${what === 'fork' ? FORK_COMMAND : REWIND_COMMAND} ${this.rankOf(bubble)}`;
    page.error(undefined);
    let reply: Message | undefined;
    try {
      reply = await page.command(command);
    } catch (error) {
      return page.error(`${command} failed: ${oneLine(error)}`);
    }
    const data = dataOf(reply?.parts);
    const refused = typeof data?.[REPLY_ERROR_KEY] === 'string';
    if (what === 'rewind') {
      const rewound = refused ? undefined : rewoundOf(data);
      if (!rewound) return page.error(textOf(reply?.parts) || `${command} had no answer.`);
      await page.open(taskId);
      return page.setText(rewound.text);
    }
    const ref = reply?.metadata?.[TASK_REF_KEY];
    const forkId = refused ? undefined : (forkedOf(data)?.taskId ?? (typeof ref === 'string' ? ref : undefined));
    if (!forkId) return page.error(textOf(reply?.parts) || `${command} had no answer.`);
    await page.open(forkId);
    page.setText(text);
  }
}
