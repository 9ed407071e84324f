import type { CancelTaskRequest, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { DelegatingRequestHandler } from '../a2a/index.js';
import { hasErrorCode, HarnessError } from '../errors.js';
import type { TaskEngine } from './engine.js';
import type { TaskStateStore } from './task-state.js';

/**
 * `CancelTask`: the engine cancels the task wherever its turn runs (`TaskEngine.cancel`, which
 * stores CANCELED), then each of its sub-tasks the same way (CMD-31). The answer is the task as
 * `GetTask` shows it. The SDK's own cancel is not used: it would write CANCELED beside the engine.
 */
export class TaskCancellation extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly engine: Pick<TaskEngine, 'cancel'>,
    private readonly state: Pick<TaskStateStore, 'getLinks'>,
    /** Told when a sub-task could not be canceled for a reason other than having ended. */
    private readonly onChildError: (error: unknown, childId: string) => void,
  ) {
    super(inner);
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const id = params.id;
    if (!id?.trim()) throw new HarnessError('params_invalid', 'Task ID is required');
    await this.cancelWithSubtasks(id, context);
    return this.inner.getTask({ tenant: params.tenant, id }, context);
  }

  private async cancelWithSubtasks(id: string, context: ServerCallContext): Promise<void> {
    await this.engine.cancel(id, context);
    const { children } = await this.state.getLinks(id);
    for (const childId of children) {
      // The parent is canceled already: one child that cannot be canceled must not keep the
      // others running, so each failure is reported and the cascade goes on.
      try {
        await this.cancelWithSubtasks(childId, context);
      } catch (error) {
        // A child that ended (or went) on its own meanwhile is the expected race, not a failure.
        if (!endedOrGone(error)) this.onChildError(error, childId);
      }
    }
  }
}

/** A task that ended or went: the SDK's handler says so with its errors, the harness with its codes. */
function endedOrGone(error: unknown): boolean {
  return (
    error instanceof TaskNotCancelableError ||
    error instanceof TaskNotFoundError ||
    hasErrorCode(error, 'task_not_cancelable') ||
    hasErrorCode(error, 'task_not_found')
  );
}
