/**
 * The user's recent conversations, listed and titled as src/recent-tasks.ts does for the page and
 * the terminal chat alike (titles told apart by the first reply where they are the same), and the
 * list under the header that reopens one. A title needs a task's whole history once; titles never
 * change, so each is kept in the browser after that.
 */
import { Role, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { distinction, listRecent as listRecentTasks, type KnownTask, type RecentTask } from '../../src/recent-tasks.js';
import { stateName } from '../../src/wire.js';
import { readHistoryMessage } from './events.js';

export { distinction, type RecentTask };

/** Where titles are kept across loads: `{taskId: {title, reply}}` (a title alone, as kept before replies were), the newest last. */
const STORED_TITLES = 'tiny-harness/titles';
/** Titles kept at most: enough for every list the page shows, small in storage. */
const KEPT_TITLES = 500;

function storedTitles(): Record<string, KnownTask> {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(STORED_TITLES) ?? '{}');
    if (!stored || typeof stored !== 'object') return {};
    const titles: Record<string, KnownTask> = {};
    for (const [id, value] of Object.entries(stored as Record<string, unknown>)) {
      if (typeof value === 'string') titles[id] = { title: value };
      else if (typeof (value as KnownTask | null)?.title === 'string') titles[id] = value as KnownTask;
    }
    return titles;
  } catch {
    return {};
  }
}

function storeTitles(titles: Record<string, KnownTask>): void {
  const entries = Object.entries(titles);
  try {
    localStorage.setItem(STORED_TITLES, JSON.stringify(Object.fromEntries(entries.slice(-KEPT_TITLES))));
  } catch {
    // Storage refused (private mode, full): titles are read again next time.
  }
}

/** A task's first reply as the page draws it: the model's words, not a command's reply or a notice. */
function firstReply(task: Task): string | undefined {
  return task.history
    .filter((m) => m.role === Role.ROLE_AGENT)
    .flatMap((m) => readHistoryMessage(m))
    .find((event) => event.kind === 'reply')?.text;
}

/** The user's newest conversations, newest first, titled; the titles are kept in the browser. */
export async function listRecent(client: Client, limit = 20): Promise<RecentTask[]> {
  const titles = storedTitles();
  const before = JSON.stringify(titles);
  const tasks = await listRecentTasks(client, limit, titles, firstReply);
  if (JSON.stringify(titles) !== before) storeTitles(titles);
  return tasks;
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

/** The user's recent conversations under the header; `onOpen` reopens one. Escape closes it. */
export class RecentList {
  constructor(
    private readonly root: HTMLElement,
    private readonly button: HTMLElement,
    private readonly onOpen: (taskId: string) => void,
  ) {
    // Unless something nearer took the key (the command list under the input closes first).
    root.ownerDocument.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || event.defaultPrevented || !this.isOpen) return;
      const focusInside = root.contains(root.ownerDocument.activeElement);
      this.close();
      if (focusInside) button.focus();
    });
  }

  get isOpen(): boolean {
    return !this.root.hidden;
  }

  /** Shows the list, saying it is loading until {@link show} or {@link note}. */
  open(): void {
    this.root.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    this.note('Loading…');
  }

  close(): void {
    this.root.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
  }

  /** A line in place of the list: loading, nothing there, or why it could not be read. */
  note(text: string): void {
    this.root.replaceChildren(element('p', 'recent-empty', text));
  }

  /** The tasks, newest first; `currentId`'s is marked as the one open. */
  show(tasks: readonly RecentTask[], currentId: string | undefined): void {
    if (tasks.length === 0) return this.note('No conversations yet.');
    const items = tasks.map((task) => {
      const button = element('button');
      button.type = 'button';
      button.dataset['taskId'] = task.id;
      button.title = `Open task ${task.id}`;
      if (task.id === currentId) button.setAttribute('aria-current', 'true');
      const when = task.updated ? ` · ${new Date(task.updated).toLocaleString()}` : '';
      const main = element('span', 'recent-main');
      main.append(element('span', 'recent-text', task.title || '(no messages)'));
      const apart = distinction(task, tasks);
      if (apart) main.append(element('span', 'recent-reply', apart));
      button.append(main, element('span', 'recent-meta', `${stateName(task.state)}${when}`));
      button.addEventListener('click', () => this.onOpen(task.id));
      const item = element('li');
      item.append(button);
      return item;
    });
    const list = element('ul');
    list.append(...items);
    this.root.replaceChildren(list);
  }
}
