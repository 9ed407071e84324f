/**
 * The sub-tasks the chat follows in the background, each to its end: one a command started (its
 * reply's `task_ref`), whose result is shown when it ends; and a sub-agent the model delegated to
 * (a sub-task note naming its agent), one line when it starts, when it waits for approval and
 * when it ends, with the way to open its own conversation (`chat --task`). Its result is the
 * delegating tool call's output, shown on that call's line, so it is not repeated here. A task
 * the chat opens on (`chat --task`) has its sub-tasks still running followed as well, each said
 * then as it would have been when it started.
 */
import { TaskState, taskStateFromJSON, type Task } from '@a2a-js/sdk';
import { isTerminal } from '../commands/index.js';
import { stateName, subtaskChildrenOf, subtaskNoteOf, type SubtaskNote } from '../wire.js';
import type { ChatScreen } from './chat-screen.js';
import { describeClientError, type Connection } from './connect.js';
import { followSubtask } from './subtasks.js';

/** The line of a sub-agent's sub-task: `↳ sub-agent reviewer · sub-task <id> · working`, and how to open it while it goes on. */
export function subagentLine(agent: string, id: string, state: TaskState, url: string): string {
  const line = `↳ sub-agent ${agent} · sub-task ${id} · ${stateName(state)}`;
  const waits = state === TaskState.TASK_STATE_INPUT_REQUIRED ? ' (its tool calls wait for approval)' : '';
  return isTerminal(state) ? line : `${line}${waits} — open it: npx tiny-harness chat ${url} --task ${id}`;
}

/** How many of an opened task's sub-tasks are read at once, to see which still run. */
const READ_AT_ONCE = 8;

export class ChatSubtasks {
  private readonly watchers = new Set<AbortController>();
  private stopped = false;
  /** The sub-tasks a command started, followed (or being followed) to their end: each is said ended once. */
  private readonly followed = new Set<string>();
  /** The follows under way, each done once its end is said (or it was stopped). */
  private readonly following = new Set<Promise<void>>();
  /** Each sub-agent's name and the last state said of it, by sub-task id. */
  private readonly agents = new Map<string, { agent: string; state: TaskState }>();

  constructor(
    private readonly connection: Connection,
    private readonly screen: ChatScreen,
  ) {}

  /** What `ChatScreen.show` hands a sub-task to: a command's `task_ref`, or a note about a sub-task. */
  readonly onSubtask = (id: string, note?: SubtaskNote): void => {
    if (!note) return this.commandSubtask(id);
    if (note.agent) this.agentState(id, note.agent, taskStateFromJSON(note.state));
  };

  /**
   * The sub-tasks of a task the chat opens on (its `SUBTASKS_KEY` links) that still run, followed
   * as those a turn starts: a sub-agent's line with how to open it, a command's sub-task said to
   * be running; each said again when it ends. Those ended already are in the conversation shown.
   */
  async opened(task: Task): Promise<void> {
    const children = subtaskChildrenOf(task.metadata);
    const running: Task[] = [];
    for (let i = 0; i < children.length && !this.stopped; i += READ_AT_ONCE) {
      const read = await Promise.all(children.slice(i, i + READ_AT_ONCE).map((id) => this.read(id, 0)));
      running.push(...read.filter((child): child is Task => child !== undefined && !isTerminal(child.status?.state)));
    }
    if (running.length === 0) return;
    // A sub-agent is told by the note of its start: in the messages shown, else in the whole history.
    let agents = agentsNoted(task);
    const whole = running.some((child) => !agents.has(child.id)) ? await this.read(task.id) : undefined;
    if (whole) agents = agentsNoted(whole);
    for (const child of running) {
      if (this.stopped) return;
      const agent = agents.get(child.id);
      const state = child.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
      if (agent) this.agentState(child.id, agent, state);
      else if (!this.followed.has(child.id)) {
        this.screen.aside(this.screen.style.subtask(`sub-task ${child.id} ${stateName(state)}`));
        this.commandSubtask(child.id);
      }
    }
  }

  /** A task as read, or undefined when it cannot be (said, unless the chat was left). */
  private async read(id: string, historyLength?: number): Promise<Task | undefined> {
    const abort = new AbortController();
    this.watchers.add(abort);
    try {
      return await this.connection.client.getTask({ tenant: '', id, historyLength }, { signal: abort.signal });
    } catch (error) {
      const why = describeClientError(error, this.connection.url);
      if (!abort.signal.aborted) this.screen.line(this.screen.style.error(`error: cannot read task ${id}: ${why}`));
      return undefined;
    } finally {
      this.watchers.delete(abort);
    }
  }

  /** A sub-task a command started: followed, once, to its end, when its result is shown. */
  private commandSubtask(id: string): void {
    if (this.followed.has(id) || this.stopped) return;
    this.followed.add(id);
    this.track(this.follow(id));
  }

  /** Resolves once every sub-task followed now has ended and been said, or was stopped. */
  async settled(): Promise<void> {
    while (this.following.size > 0) await Promise.all(this.following);
  }

  private track(follow: Promise<void>): void {
    this.following.add(follow);
    void follow.finally(() => this.following.delete(follow));
  }

  /** Stops following them all (the chat is left). */
  stop(): void {
    this.stopped = true;
    for (const watcher of this.watchers) watcher.abort();
  }

  /** A sub-agent's state, from its note or its end: said once each, never after its end; followed from its first. */
  private agentState(id: string, agent: string, state: TaskState): void {
    const known = this.agents.get(id);
    if (known && (known.state === state || isTerminal(known.state))) return;
    this.agents.set(id, { agent, state });
    this.screen.aside(this.screen.style.subtask(subagentLine(agent, id, state, this.connection.url)));
    if (!known && !isTerminal(state) && !this.stopped) this.track(this.follow(id, agent));
  }

  /** Follows a sub-task to its end, then shows how it ended. */
  private async follow(id: string, agent?: string): Promise<void> {
    const abort = new AbortController();
    this.watchers.add(abort);
    try {
      const end = await followSubtask(this.connection, id, abort.signal);
      if (end.kind === 'ended' && agent)
        this.agentState(id, agent, end.task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
      else if (end.kind === 'ended') this.screen.subtaskEnded(end.task);
      const lost = end.kind === 'lost' ? describeClientError(end.error, this.connection.url) : '';
      if (lost) this.screen.line(this.screen.style.error(`error: lost sub-task ${id}: ${lost}`));
    } finally {
      this.watchers.delete(abort);
    }
  }
}

/** The agent of each sub-task a sub-agent runs, by its id, from the notes of their starts in the task's messages. */
function agentsNoted(task: Task): Map<string, string> {
  const agents = new Map<string, string>();
  for (const message of [...task.history, task.status?.message]) {
    const note = subtaskNoteOf(message?.metadata);
    if (note?.agent) agents.set(note.id, note.agent);
  }
  return agents;
}
