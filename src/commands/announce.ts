import { TaskState, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent, ResultManager, type ExecutionEventBusManager, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { isTerminal } from '../wire.js';

/** Which tasks have a model turn in flight; implemented by whatever runs the turns. */
export interface ActiveTurns {
  isActive(taskId: string): boolean;
}

export interface AnnounceTarget {
  taskStore: TaskStore;
  eventBusManager: ExecutionEventBusManager;
  activeTurns?: ActiveTurns;
}

/**
 * Adds a message to a task as a status update that does not change its state: a command's
 * reply (CMD-4, CMD-6) or a note from the harness. The update is stored through the SDK's
 * result manager, so it takes the same per-task write lock as a running turn's events; its
 * state is read inside that lock, from the stored task, so it never undoes a state change that
 * landed first (a turn ending at the same moment). While a turn is starting or running the
 * state is WORKING, which keeps that turn's own streams open (CMD-9). The update is then
 * published on the task's live bus, if it has one, for every stream open on the task (CMD-8).
 * `update.status.state` is set to the state used.
 */
export async function announce(target: AnnounceTarget, update: TaskStatusUpdateEvent, context: ServerCallContext): Promise<void> {
  const { taskStore, activeTurns } = target;
  const stateReadingStore: TaskStore = {
    load: async (taskId, loadContext) => {
      const stored = await taskStore.load(taskId, loadContext);
      const state = stored?.status?.state;
      if (update.status && state !== undefined) {
        update.status.state = activeTurns?.isActive(taskId) && !isTerminal(state) ? TaskState.TASK_STATE_WORKING : state;
      }
      return stored;
    },
    save: (task, saveContext) => taskStore.save(task, saveContext),
    list: (params, listContext) => taskStore.list(params, listContext),
  };
  await new ResultManager(stateReadingStore, context).processEvent(AgentEvent.statusUpdate(update));
  target.eventBusManager.getByTaskId(update.taskId, context)?.publish(AgentEvent.statusUpdate(update));
}
