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
  /** The start of the first reply in it, cut as a title is; empty when none is known. */
  reply: string;
}

/** What a task read with its whole history is known by: its first user message, and its first reply. */
export interface KnownTask {
  title: string;
  /** Kept once there is one. */
  reply?: string;
}

/** The text of a task's first reply, if it has one: by default its first agent message's text. */
export type ReplyOf = (task: Task) => string | undefined;

const firstAgentText: ReplyOf = (task) => {
  const reply = task.history.find((m) => m.role === Role.ROLE_AGENT);
  return reply ? textOf(reply.parts) : undefined;
};

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

/** What a task read with its whole history is known by. */
function knownOf(task: Task, replyOf: ReplyOf): KnownTask {
  const first = task.history.find((m) => m.role === Role.ROLE_USER);
  const known: KnownTask = { title: titleOf(textOf(first?.parts)) };
  const reply = replyOf(task);
  if (reply) known.reply = titleOf(reply);
  return known;
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
 * The user's newest conversations, newest first, each titled by its first message, with its first
 * reply. `known` holds what is known already, by task id; when a task listed is not there, or
 * shares its title with another listed task while its reply is not known, every task is listed
 * once more with its whole history (no artifacts), and what is found is added to `known`.
 */
export async function listRecent(
  client: Client,
  limit = 20,
  known: Record<string, KnownTask> = {},
  replyOf: ReplyOf = firstAgentText,
): Promise<RecentTask[]> {
  const tasks = await ownTasks(client, limit, 0);
  const shared = sameTitles(tasks.map((task) => known[task.id]?.title));
  const unknown = (id: string) =>
    known[id] === undefined || (shared.has(known[id].title) && known[id].reply === undefined);
  if (tasks.some((task) => unknown(task.id))) {
    for (const task of await ownTasks(client, limit, undefined)) {
      const found = knownOf(task, replyOf);
      // A task with no message yet gets its title once it has one.
      if (found.title) known[task.id] = found;
    }
  }
  return tasks.map((task) => ({
    id: task.id,
    state: task.status?.state,
    updated: task.status?.timestamp,
    title: known[task.id]?.title ?? '',
    reply: known[task.id]?.reply ?? '',
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
