import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { TaskSnapshot } from '../store/index.js';
import { SUBTASKS_KEY } from '../wire.js';
import type { TaskStateStore } from './task-state.js';

/** Where tasks are read as stored. */
export interface TaskReads {
  read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined>;
  list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse>;
}

/**
 * Tasks as clients see them: the sub-task links, which live in the harness's own table (written
 * with a sub-task, not with its task), shown in `Task.metadata` on every read and list.
 */
export class TaskView {
  constructor(
    private readonly store: TaskReads,
    private readonly state: Pick<TaskStateStore, 'getLinks'>,
  ) {}

  async read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined> {
    const snapshot = await this.store.read(taskId, context);
    return snapshot && { task: await this.withLinks(snapshot.task), generation: snapshot.generation };
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return (await this.read(taskId, context))?.task;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const page = await this.store.list(params, context);
    return { ...page, tasks: await Promise.all(page.tasks.map((task) => this.withLinks(task))) };
  }

  private async withLinks(task: Task): Promise<Task> {
    const { parent, children } = await this.state.getLinks(task.id);
    if (!parent && children.length === 0) return task;
    const links = { ...(parent ? { parent } : {}), ...(children.length ? { children } : {}) };
    return { ...task, metadata: { ...task.metadata, [SUBTASKS_KEY]: links } };
  }
}
