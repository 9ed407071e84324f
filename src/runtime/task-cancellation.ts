import { TaskState, type CancelTaskRequest, type Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { DelegatingRequestHandler } from '../a2a/index.js';
import { hasErrorCode, HarnessError } from '../errors.js';
import { isTerminal } from '../wire.js';
import type { TaskEngine } from './engine.js';
import type { TaskStateStore } from './task-state.js';

/**
 * `CancelTask` on any instance, for a task whose turn may run on another, cascading to its
 * sub-tasks (CMD-31). Three cases, after the task is found and checked cancelable:
 * - its turn runs on another instance: that instance is asked to cancel it (its model request
 *   aborted), and the answer waits for the turn's final status;
 * - its turn runs here, or it is idle: the SDK's own cancel, on a bus of this instance, so that
 *   the CANCELED status reaches the task's streams here and elsewhere (an idle task the SDK
 *   would cancel in the store alone, unseen by subscribers on other instances).
 * Then each unfinished sub-task is canceled the same way, wherever it runs. It wraps the
 * handler's `cancelTask` rather than living in the executor, because the SDK calls the
 * executor only for a task with a live event bus.
 */
export class TaskCancellation extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly engine: Pick<TaskEngine, 'buses' | 'isBusy' | 'runsHere' | 'cancelElsewhere'>,
    private readonly state: Pick<TaskStateStore, 'getLinks'>,
    /** Told when a sub-task could not be canceled for a reason other than having ended. */
    private readonly onChildError: (error: unknown, childId: string) => void,
  ) {
    super(inner);
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = await this.cancelOne(params, context);
    const { children } = await this.state.getLinks(task.id);
    for (const childId of children) {
      // The parent is canceled already: one child that cannot be canceled must not keep the
      // others running, so each failure is reported and the cascade goes on.
      try {
        const child = await this.inner.getTask({ tenant: params.tenant, id: childId, historyLength: 0 }, context);
        if (!isTerminal(child.status?.state)) await this.cancelTask({ ...params, id: childId }, context);
      } catch (error) {
        // A child that ended (or went) on its own meanwhile is the expected race, not a failure.
        if (!endedOrGone(error)) this.onChildError(error, childId);
      }
    }
    return task;
  }

  private async cancelOne(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const id = params.id;
    const task = id ? await this.inner.getTask({ tenant: params.tenant, id, historyLength: 0 }, context) : undefined;
    if (task && !isTerminal(task.status?.state) && !this.engine.runsHere(id) && (await this.engine.isBusy(id))) {
      await this.engine.cancelElsewhere(id, context);
      const after = await this.inner.getTask({ tenant: params.tenant, id }, context);
      if (after.status?.state === TaskState.TASK_STATE_CANCELED) return after;
      if (isTerminal(after.status?.state)) throw new HarnessError('task_not_cancelable', `Task not cancelable: ${id}`);
      // The turn ended otherwise (it finished first, or its instance died): the task is idle now.
      return this.cancelHere(params, context);
    }
    return this.cancelHere(params, context);
  }

  private async cancelHere(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const id = params.id;
    const made = id && !this.engine.buses.getByTaskId(id, context);
    if (made) this.engine.buses.createOrGetByTaskId(id, context);
    try {
      return await this.inner.cancelTask(params, context);
    } finally {
      if (made) this.engine.buses.releaseIfUnused(id, context, (taskId) => this.engine.runsHere(taskId));
    }
  }
}

/** A task that ended or went: the SDK's handler inside says so with its errors, the harness with its codes. */
function endedOrGone(error: unknown): boolean {
  return (
    error instanceof TaskNotCancelableError ||
    error instanceof TaskNotFoundError ||
    hasErrorCode(error, 'task_not_cancelable') ||
    hasErrorCode(error, 'task_not_found')
  );
}
