/**
 * The user's recent conversations, for the web page's "Recent" list and `chat --resume`: their
 * tasks that are not sub-tasks, newest first, each titled by the first message the user sent in
 * it. A2A reads a task's history from its newest message, so a title needs the whole history
 * once; titles never change, so a caller may keep them (the page does, in the browser). Like
 * src/wire.ts, it depends on the SDK's types only (the page bundles it), never on Node.
 */
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { subtaskParentOf, textOf } from './wire.js';

/** A task of the user's, as a list of recent conversations shows it. */
export interface RecentTask {
  id: string;
  state: TaskState | undefined;
  /** When its status last changed (ISO 8601), if known. */
  updated: string | undefined;
  /** The first message the user sent in it, cut to a title; empty when it has none. */
  title: string;
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

/** The title of a task read with its whole history: its first user message. */
function titleOfTask(task: Task): string {
  const first = task.history.find((m) => m.role === Role.ROLE_USER);
  return titleOf(textOf(first?.parts));
}

/** The user's newest tasks that are not sub-tasks, newest first, with `historyLength` messages each (all when undefined). */
export async function ownTasks(client: Client, limit: number, historyLength: number | undefined): Promise<Task[]> {
  const { tasks } = await client.listTasks({
    tenant: '',
    contextId: '',
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: limit,
    pageToken: '',
    historyLength,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  });
  return tasks.filter((task) => subtaskParentOf(task.metadata) === undefined);
}

/**
 * The user's newest conversations, newest first, each titled by its first message. `titles`
 * holds the titles known already, by task id; when a task listed has none there, every task is
 * listed once more with its whole history (no artifacts), and the titles found are added to it.
 */
export async function listRecent(
  client: Client,
  limit = 20,
  titles: Record<string, string> = {},
): Promise<RecentTask[]> {
  const tasks = await ownTasks(client, limit, 0);
  if (tasks.some((task) => titles[task.id] === undefined)) {
    for (const task of await ownTasks(client, limit, undefined)) {
      const title = titleOfTask(task);
      // A task with no message yet gets its title once it has one.
      if (title) titles[task.id] = title;
    }
  }
  return tasks.map((task) => ({
    id: task.id,
    state: task.status?.state,
    updated: task.status?.timestamp,
    title: titles[task.id] ?? '',
  }));
}
