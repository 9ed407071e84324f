/**
 * The sub-tasks the chat follows in the background, each to its end: one a command started (its
 * reply's `task_ref`), whose result is shown when it ends; and a sub-agent the model delegated to
 * (a sub-task note naming its agent), one line when it starts, when it waits for approval and
 * when it ends, with the way to open its own conversation (`chat --task`). Its result is the
 * delegating tool call's output, shown on that call's line, so it is not repeated here.
 */
import { TaskState, taskStateFromJSON } from '@a2a-js/sdk';
import { isTerminal } from '../commands/index.js';
import { stateName, type SubtaskNote } from '../wire.js';
import type { ChatScreen } from './chat-screen.js';
import { describeClientError, type Connection } from './connect.js';
import { followSubtask } from './subtasks.js';

/** The line of a sub-agent's sub-task: `↳ sub-agent reviewer · sub-task <id> · working`, and how to open it while it goes on. */
export function subagentLine(agent: string, id: string, state: TaskState, url: string): string {
  const line = `↳ sub-agent ${agent} · sub-task ${id} · ${stateName(state)}`;
  const waits = state === TaskState.TASK_STATE_INPUT_REQUIRED ? ' (its tool calls wait for approval)' : '';
  return isTerminal(state) ? line : `${line}${waits} — open it: npx tiny-harness chat ${url} --task ${id}`;
}

export class ChatSubtasks {
  private readonly watchers = new Set<AbortController>();
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
    if (!note) return this.track(this.follow(id));
    if (note.agent) this.agentState(id, note.agent, taskStateFromJSON(note.state));
  };

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
    for (const watcher of this.watchers) watcher.abort();
  }

  /** A sub-agent's state, from its note or its end: said once each, never after its end; followed from its first. */
  private agentState(id: string, agent: string, state: TaskState): void {
    const known = this.agents.get(id);
    if (known && (known.state === state || isTerminal(known.state))) return;
    this.agents.set(id, { agent, state });
    this.screen.aside(this.screen.style.subtask(subagentLine(agent, id, state, this.connection.url)));
    if (!known && !isTerminal(state)) this.track(this.follow(id, agent));
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
