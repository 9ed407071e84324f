import { TaskState, type Task } from '@a2a-js/sdk';
import { AgentEvent, ResultManager, type ExecutionEventBusManager, type TaskStore } from '@a2a-js/sdk/server';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { CommandTaskPort } from './port.js';

/**
 * The extension's port over a bare `DefaultRequestHandler`: give it the handler's own task
 * store and event bus manager. The SDK keeps a bus for a task while an execution runs on it (and
 * subscribers may keep one on an idle task), so a task is busy when it has a bus and its stored
 * state says a turn is in flight. A post is stored through the SDK's `ResultManager`, reading the state
 * from the stored task at that moment, then published on the task's bus for its open streams.
 * One process only, and without a per-task write lock, unlike the harness's engine: a reply
 * landing exactly as a turn ends may show WORKING on a task that has just stopped, and an
 * update decided from the task as stored (`DecidedUpdate`) is decided before it is stored, not with it.
 */
export function sdkTaskPort(taskStore: TaskStore, eventBusManager: ExecutionEventBusManager): CommandTaskPort {
  const inFlight = (state: TaskState | undefined) =>
    state === TaskState.TASK_STATE_SUBMITTED || state === TaskState.TASK_STATE_WORKING;
  return {
    async isBusy(taskId, context) {
      return (
        eventBusManager.getByTaskId(taskId, context) !== undefined &&
        inFlight((await taskStore.load(taskId, context))?.status?.state)
      );
    },
    create: (task, context) => taskStore.save(task, context),
    async post(given, context, exchange = {}) {
      const stored = await taskStore.load(given.taskId, context);
      if (!stored) throw new TaskNotFoundError(`Task not found: ${given.taskId}`);
      const message = exchange.message;
      const { update, records = [] } =
        'decide' in given
          ? await given.decide({ ...stored, history: message ? [...stored.history, message] : stored.history })
          : { update: given, records: exchange.records };
      const state = stored.status?.state ?? TaskState.TASK_STATE_INPUT_REQUIRED;
      if (update.status)
        update.status.state =
          eventBusManager.getByTaskId(update.taskId, context) && inFlight(state) ? TaskState.TASK_STATE_WORKING : state;
      const added = [
        ...(message && !stored.history.some((m) => m.messageId === message.messageId) ? [message] : []),
        ...records,
      ];
      if (added.length > 0) await taskStore.save({ ...stored, history: [...stored.history, ...added] }, context);
      await new ResultManager(taskStore, context).processEvent(AgentEvent.statusUpdate(update));
      eventBusManager.getByTaskId(update.taskId, context)?.publish(AgentEvent.statusUpdate(update));
      const after: Task | undefined = await taskStore.load(update.taskId, context);
      return after ?? stored;
    },
  };
}
