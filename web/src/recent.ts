/**
 * The user's recent conversations, listed and titled as src/recent-tasks.ts does for the page and
 * the terminal chat alike, and the list under the header that reopens one. A title needs a
 * task's whole history once; titles never change, so each is kept in the browser after that.
 */
import type { Client } from '@a2a-js/sdk/client';
import { listRecent as listRecentTasks, type RecentTask } from '../../src/recent-tasks.js';
import { stateName } from '../../src/wire.js';

export type { RecentTask };

/** Where titles are kept across loads: `{taskId: title}`, the newest last. */
const STORED_TITLES = 'tiny-harness/titles';
/** Titles kept at most: enough for every list the page shows, small in storage. */
const KEPT_TITLES = 500;

function storedTitles(): Record<string, string> {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(STORED_TITLES) ?? '{}');
    return stored && typeof stored === 'object' ? (stored as Record<string, string>) : {};
  } catch {
    return {};
  }
}

function storeTitles(titles: Record<string, string>): void {
  const entries = Object.entries(titles);
  try {
    localStorage.setItem(STORED_TITLES, JSON.stringify(Object.fromEntries(entries.slice(-KEPT_TITLES))));
  } catch {
    // Storage refused (private mode, full): titles are read again next time.
  }
}

/** The user's newest conversations, newest first, titled; the titles are kept in the browser. */
export async function listRecent(client: Client, limit = 20): Promise<RecentTask[]> {
  const titles = storedTitles();
  const known = Object.keys(titles).length;
  const tasks = await listRecentTasks(client, limit, titles);
  if (Object.keys(titles).length !== known) storeTitles(titles);
  return tasks;
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

/** The user's recent conversations under the header; `onOpen` reopens one. */
export class RecentList {
  constructor(
    private readonly root: HTMLElement,
    private readonly button: HTMLElement,
    private readonly onOpen: (taskId: string) => void,
  ) {}

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
      button.append(
        element('span', 'recent-text', task.title || '(no messages)'),
        element('span', 'recent-meta', `${stateName(task.state)}${when}`),
      );
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
