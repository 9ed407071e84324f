import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { withGeneration } from './turn/turn-stream.js';
import { SUBTASKS_KEY } from '../wire.js';
import { visibleHistory } from '../conversation/visible.js';
import type { LoggedEvent, TaskLinks, TaskSnapshot, TaskStateStore } from '../ports.js';

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
    // Both read at once: on PostgreSQL in one statement (`store/reads-together.ts`).
    const [snapshot, links] = await Promise.all([this.store.read(taskId, context), this.state.getLinks(taskId)]);
    if (!snapshot) return undefined;
    const task = withGeneration(withLinks(snapshot.task, links), snapshot.generation);
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
    const tasks = await Promise.all(
      page.tasks.map(async (task) => withLinks(task, await this.state.getLinks(task.id))),
    );
    return { ...page, tasks };
  }
}

/** The task as clients see it: its links in its metadata, the history without what a rewind hid. */
function withLinks(stored: Task, { parent, children }: TaskLinks): Task {
  const history = visibleHistory(stored.history);
  const task = history === stored.history ? stored : { ...stored, history };
  if (!parent && children.length === 0) return task;
  const links = { ...(parent ? { parent } : {}), ...(children.length ? { children } : {}) };
  return { ...task, metadata: { ...task.metadata, [SUBTASKS_KEY]: links } };
}
