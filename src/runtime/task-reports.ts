import { taskStateToJSON, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { TaskView } from './subtask-metadata.js';
import type { TaskReport, TaskReporter } from '../commands/index.js';
import type { TaskModels } from './task-models.js';
import type { TaskStateStore } from './task-state.js';
import type { TaskEngine } from './engine.js';
import { subtaskChildrenOf } from '../wire.js';

/**
 * What `/status` shows of a task: its state, model, token usage, turn, sub-tasks, and push
 * notifications that failed. The task is
 * given as clients see it (`TaskView`): its sub-tasks are the links its metadata shows.
 */
export class TaskReports implements TaskReporter {
  constructor(
    private readonly models: TaskModels,
    private readonly state: Pick<TaskStateStore, 'getUsage'>,
    private readonly engine: Pick<TaskEngine, 'isBusy'>,
    private readonly taskStore: Pick<TaskView, 'load'>,
    /** The push outbox: how many of a task's deliveries failed. */
    private readonly push?: { failedCount(taskId: string): Promise<number> },
  ) {}

  async report(task: Task, callContext: ServerCallContext): Promise<TaskReport> {
    const subtasks = await Promise.all(
      subtaskChildrenOf(task.metadata).map(async (id) => ({
        id,
        state: stateName((await this.taskStore.load(id, callContext))?.status?.state),
      })),
    );
    const pushFailed = (await this.push?.failedCount(task.id)) ?? 0;
    return {
      state: stateName(task.status?.state),
      model: await this.models.modelFor(task, callContext),
      usage: await this.state.getUsage(task.id),
      turnRunning: await this.engine.isBusy(task.id),
      subtasks,
      ...(pushFailed > 0 ? { pushFailed } : {}),
    };
  }
}

function stateName(state: Parameters<typeof taskStateToJSON>[0] | undefined): string {
  return state === undefined ? 'TASK_STATE_UNSPECIFIED' : taskStateToJSON(state);
}
