import { taskStateToJSON, type Task } from '@a2a-js/sdk';
import type { ModelChoice, ModelControl, TaskReport, TaskReporter } from '../commands/index.js';
import type { TaskStateStore } from './task-state.js';
import type { TurnRegistry } from './turns.js';

/** The models a task may use; the catalog in `models/` is one. */
export interface ModelOffer {
  list(): ModelChoice[];
  has(id: string): boolean;
  readonly defaultModel: string;
}

/**
 * Which model a task uses, and the per-task facts `/model` and `/status` show. A task's own
 * choice wins; a task without one uses the model last chosen in its context (CMD-22), and
 * otherwise the default. Choices are stored, so they survive a restart (CMD-21).
 */
export class TaskModels implements ModelControl, TaskReporter {
  constructor(
    private readonly offer: ModelOffer,
    private readonly state: TaskStateStore,
    private readonly turns: TurnRegistry,
  ) {}

  async modelFor(task: Pick<Task, 'id' | 'contextId'>): Promise<string> {
    return (
      (await this.state.getTaskModel(task.id)) ??
      (await this.state.getContextModel(task.contextId)) ??
      this.offer.defaultModel
    );
  }

  async describe(task: Task): Promise<{ current: string; choices: ModelChoice[] }> {
    return { current: await this.modelFor(task), choices: this.offer.list() };
  }

  async choose(task: Task, modelId: string): Promise<boolean> {
    if (!this.offer.has(modelId)) return false;
    await this.state.setTaskModel(task.id, task.contextId, modelId);
    return true;
  }

  async report(task: Task): Promise<TaskReport> {
    const state = task.status?.state;
    return {
      state: state === undefined ? 'TASK_STATE_UNSPECIFIED' : taskStateToJSON(state),
      model: await this.modelFor(task),
      usage: await this.state.getUsage(task.id),
      turnRunning: this.turns.isActive(task.id),
    };
  }
}
