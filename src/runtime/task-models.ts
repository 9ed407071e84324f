import type { Task } from '@a2a-js/sdk';
import type { ModelChoice, ModelControl } from '../commands/index.js';
import type { TaskStateStore } from './task-state.js';

/** The models a task may use; the catalog in `models/` is one. */
export interface ModelOffer {
  list(): ModelChoice[];
  has(id: string): boolean;
  readonly defaultModel: string;
}

/**
 * Which model a task uses, as `/model` shows and sets it. A task's own
 * choice wins; a task without one uses the model last chosen in its context (CMD-22), and
 * otherwise the default. Choices are stored, so they survive a restart (CMD-21).
 */
export class TaskModels implements ModelControl {
  constructor(
    private readonly offer: ModelOffer,
    private readonly state: TaskStateStore,
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
}
