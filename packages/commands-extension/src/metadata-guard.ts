import type { Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { COMMAND_KEY, TASK_REF_KEY } from './wire.js';

/**
 * Wraps a task store so that `Task.metadata` never keeps the reply keys (CMD-6). The SDK's
 * result manager merges every status update's metadata into the task's, on the command path
 * and on a running turn's path alike; removing the keys at the one place every save passes
 * keeps the rule everywhere. The harness therefore never uses `command` or `task_ref` at the
 * top of `Task.metadata` itself.
 */
export function withoutCommandMetadata(store: TaskStore): TaskStore {
  return {
    load: (taskId, context) => store.load(taskId, context),
    list: (params, context) => store.list(params, context),
    save(task: Task, context: ServerCallContext) {
      const metadata = task.metadata;
      if (!metadata || !(COMMAND_KEY in metadata || TASK_REF_KEY in metadata)) return store.save(task, context);
      const { [COMMAND_KEY]: _command, [TASK_REF_KEY]: _taskRef, ...rest } = metadata;
      return store.save({ ...task, metadata: rest }, context);
    },
  };
}
