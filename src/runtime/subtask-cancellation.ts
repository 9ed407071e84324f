import type { CancelTaskRequest, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { DelegatingRequestHandler } from '../commands/index.js';
import { isTerminal } from '../wire.js';
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
    /** Told when a sub-task could not be canceled for a reason other than having ended. */
    private readonly onChildError: (error: unknown, childId: string) => void,
  ) {
    super(inner);
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = await this.inner.cancelTask(params, context);
    const { children } = await this.state.getLinks(task.id);
    for (const childId of children) {
      // The parent is canceled already: one child that cannot be canceled must not keep the
      // others running, so each failure is reported and the cascade goes on.
      try {
        const child = await this.inner.getTask({ tenant: params.tenant, id: childId, historyLength: 0 }, context);
        if (!isTerminal(child.status?.state)) await this.cancelTask({ ...params, id: childId }, context);
      } catch (error) {
        // A child that ended (or went) on its own meanwhile is the expected race, not a failure.
        if (!(error instanceof TaskNotCancelableError || error instanceof TaskNotFoundError)) this.onChildError(error, childId);
      }
    }
    return task;
  }
}
