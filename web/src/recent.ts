/**
 * The user's recent conversations: which tasks, each titled by the first message the user sent
 * in it (and, where titles are the same, told apart by the first reply), and the list under the
 * header that reopens one. A2A reads a task's history from its newest message, so a title needs
 * the whole history once; titles never change, so each is kept in the browser after that.
 */
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { stateName, subtaskParentOf, textOf } from '../../src/wire.js';
import { readHistoryMessage } from './events.js';

/** A task of the user's, as the list of recent conversations shows it. */
export interface RecentTask {
  id: string;
  state: TaskState | undefined;
  /** When its status last changed (ISO 8601), if known. */
  updated: string | undefined;
  /** The first message the user sent in it, cut to a title; empty when it has none. */
  title: string;
  /** The start of the first reply in it, cut as a title is; empty when none is known. */
  reply: string;
}

/** How long a title may be: about a line of the list on a phone. */
export const TITLE_CHARS = 60;

/** A message's text as a title: on one line, cut at a word near `max` characters, with "…" when cut. */
export function titleOf(text: string, max = TITLE_CHARS): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  // Cut at the last word boundary unless that throws away most of the line (one long word).
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** What a task read with its whole history is known by: its first user message, and its first reply. */
interface Known {
  title: string;
  /** Kept once there is one. */
  reply?: string;
}

function knownOf(task: Task): Known {
  const first = task.history.find((m) => m.role === Role.ROLE_USER);
  const reply = task.history
    .filter((m) => m.role === Role.ROLE_AGENT)
    .flatMap((m) => readHistoryMessage(m))
    .find((event) => event.kind === 'reply');
  const known: Known = { title: titleOf(textOf(first?.parts)) };
  if (reply?.text) known.reply = titleOf(reply.text);
  return known;
}

/** Where titles are kept across loads: `{taskId: {title, reply}}` (a title alone, as kept before replies were), the newest last. */
const STORED_TITLES = 'tiny-harness/titles';
/** Titles kept at most: enough for every list the page shows, small in storage. */
const KEPT_TITLES = 500;

function storedTitles(): Record<string, Known> {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(STORED_TITLES) ?? '{}');
    if (!stored || typeof stored !== 'object') return {};
    const titles: Record<string, Known> = {};
    for (const [id, value] of Object.entries(stored as Record<string, unknown>)) {
      if (typeof value === 'string') titles[id] = { title: value };
      else if (typeof (value as Known | null)?.title === 'string') titles[id] = value as Known;
    }
    return titles;
  } catch {
    return {};
  }
}

function storeTitles(titles: Record<string, Known>): void {
  const entries = Object.entries(titles);
  try {
    localStorage.setItem(STORED_TITLES, JSON.stringify(Object.fromEntries(entries.slice(-KEPT_TITLES))));
  } catch {
    // Storage refused (private mode, full): titles are read again next time.
  }
}

/**
 * The user's newest conversations (tasks that are not sub-tasks), newest first, each titled by
 * its first message, with its first reply. Tasks whose title the browser does not keep yet, or
 * whose title another listed task has too while their reply is not kept, are listed once more
 * with their whole history (without artifacts).
 */
export async function listRecent(client: Client, limit = 20): Promise<RecentTask[]> {
  const list = (historyLength: number | undefined) =>
    client.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: limit,
      pageToken: '',
      historyLength,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    });
  const tasks = (await list(0)).tasks.filter((task) => subtaskParentOf(task.metadata) === undefined);
  const titles = storedTitles();
  const shared = sameTitles(tasks.map((task) => titles[task.id]?.title));
  const unknown = (id: string) =>
    titles[id] === undefined || (shared.has(titles[id].title) && titles[id].reply === undefined);
  if (tasks.some((task) => unknown(task.id))) {
    for (const task of (await list(undefined)).tasks) {
      const known = knownOf(task);
      // A task with no message yet gets its title once it has one.
      if (known.title) titles[task.id] = known;
    }
    storeTitles(titles);
  }
  return tasks.map((task) => ({
    id: task.id,
    state: task.status?.state,
    updated: task.status?.timestamp,
    title: titles[task.id]?.title ?? '',
    reply: titles[task.id]?.reply ?? '',
  }));
}

/** The titles given more than once. */
function sameTitles(titles: readonly (string | undefined)[]): Set<string> {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const title of titles) {
    if (title === undefined) continue;
    if (seen.has(title)) twice.add(title);
    seen.add(title);
  }
  return twice;
}

/**
 * What tells a task apart from the others listed with its title: its first reply, and its
 * task id where that does not (no reply yet, or the same); empty when its title is its own.
 */
export function distinction(task: RecentTask, tasks: readonly RecentTask[]): string {
  const same = tasks.filter((other) => other.title === task.title);
  if (same.length < 2) return '';
  const replyAlone = task.reply !== '' && same.filter((other) => other.reply === task.reply).length === 1;
  return replyAlone ? task.reply : [task.reply, `task ${task.id.slice(0, 8)}`].filter(Boolean).join(' · ');
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
