import type { CancelTaskRequest, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { DelegatingRequestHandler, isTerminal } from '../commands/index.js';
import type { TaskStateStore } from './task-state.js';

/**
 * Canceling a task cancels its unfinished sub-tasks, and theirs (CMD-31). It wraps the
 * handler's `cancelTask` rather than living in the executor, because the SDK calls the
 * executor only for a task with a live event bus, and a parent waiting for input may have none.
 */
export class SubtaskCancellation extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly state: Pick<TaskStateStore, 'getLinks'>,
  ) {
    super(inner);
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = await this.inner.cancelTask(params, context);
    const { children } = await this.state.getLinks(task.id);
    for (const childId of children) {
      const child = await this.inner.getTask({ tenant: params.tenant, id: childId, historyLength: 0 }, context).catch(() => undefined);
      if (!child || isTerminal(child.status?.state)) continue;
      // A child that ends on its own meanwhile is not cancelable any more; that is fine.
      await this.cancelTask({ ...params, id: childId }, context).catch(() => undefined);
    }
    return task;
  }
}
