import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { withGeneration } from './turn/turn-stream.js';
import { SUBTASKS_KEY } from '../wire.js';
import { visibleHistory } from '../conversation/visible.js';
import type { LoggedEvent, TaskSnapshot, TaskStateStore } from '../ports.js';

/** Where tasks are read as stored. */
export interface TaskReads {
  read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined>;
  readLog(taskId: string, after: number): Promise<LoggedEvent[]>;
  list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse>;
}

/**
 * Tasks as clients see them: the sub-task links, which live in the harness's own table (written
 * with a sub-task, not with its task), shown in `Task.metadata` on every read and list; a read
 * task's generation (`GENERATION_KEY`); and the history without what a rewind hid (CMD-37),
 * which the store keeps.
 */
export class TaskView {
  constructor(
    private readonly store: TaskReads,
    private readonly state: Pick<TaskStateStore, 'getLinks'>,
  ) {}

  /** The task with its links, and its generation in its metadata (`GENERATION_KEY`). */
  async read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined> {
    const snapshot = await this.store.read(taskId, context);
    if (!snapshot) return undefined;
    const task = withGeneration(await this.withLinks(snapshot.task), snapshot.generation);
    return { task, generation: snapshot.generation };
  }

  /** The task's logged events after generation `after`, in order, as far as the log holds them. */
  readLog(taskId: string, after: number): Promise<LoggedEvent[]> {
    return this.store.readLog(taskId, after);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return (await this.read(taskId, context))?.task;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const page = await this.store.list(params, context);
    return { ...page, tasks: await Promise.all(page.tasks.map((task) => this.withLinks(task))) };
  }

  private async withLinks(stored: Task): Promise<Task> {
    const history = visibleHistory(stored.history);
    const task = history === stored.history ? stored : { ...stored, history };
    const { parent, children } = await this.state.getLinks(task.id);
    if (!parent && children.length === 0) return task;
    const links = { ...(parent ? { parent } : {}), ...(children.length ? { children } : {}) };
    return { ...task, metadata: { ...task.metadata, [SUBTASKS_KEY]: links } };
  }
}
