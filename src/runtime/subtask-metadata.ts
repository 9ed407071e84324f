import type { Task } from '@a2a-js/sdk';
import type { TaskStore } from '@a2a-js/sdk/server';
import { SUBTASKS_KEY } from '../wire.js';
import { carrySeq } from '../event-seq.js';
import type { TaskStateStore } from './task-state.js';

/**
 * Shows the sub-task links, which live in the harness's own table, in `Task.metadata` on every
 * load and list, and keeps them out of the task JSON on save. Kept apart because the SDK saves
 * the whole task after every event: a link written into a running task's metadata from
 * outside its turn could be overwritten by that turn's next save.
 */
export function withSubtaskLinks(store: TaskStore, state: Pick<TaskStateStore, 'getLinks'>): TaskStore {
  const decorate = async (task: Task): Promise<Task> => {
    const { parent, children } = await state.getLinks(task.id);
    if (!parent && children.length === 0) return task;
    const links = { ...(parent ? { parent } : {}), ...(children.length ? { children } : {}) };
    return carrySeq(task, { ...task, metadata: { ...task.metadata, [SUBTASKS_KEY]: links } });
  };
  return {
    load: async (taskId, context) => {
      const task = await store.load(taskId, context);
      return task && decorate(task);
    },
    list: async (params, context) => {
      const page = await store.list(params, context);
      return { ...page, tasks: await Promise.all(page.tasks.map(decorate)) };
    },
    save: (task, context) => {
      if (!task.metadata || !(SUBTASKS_KEY in task.metadata)) return store.save(task, context);
      const { [SUBTASKS_KEY]: _links, ...rest } = task.metadata;
      return store.save({ ...task, metadata: rest }, context);
    },
  };
}
