import type { Task } from '@a2a-js/sdk';

/**
 * What the built-in commands need from the harness, and no more: `commands/` knows the SDK,
 * not the model loop, so the harness's runtime implements these (dependencies point one way).
 */
export interface ModelChoice {
  id: string;
  description?: string;
}

export interface ModelControl {
  /** The task's current model and the models it may choose from, in the order to show. */
  describe(task: Task): Promise<{ current: string; choices: ModelChoice[] }>;
  /** Makes `modelId` the task's model; false, changing nothing, when it is not offered. */
  choose(task: Task, modelId: string): Promise<boolean>;
}

export interface UsageLine {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export interface TaskReport {
  /** The state's protocol name, e.g. TASK_STATE_INPUT_REQUIRED. */
  state: string;
  model: string;
  usage: UsageLine[];
  turnRunning: boolean;
}

export interface TaskReporter {
  report(task: Task): Promise<TaskReport>;
}
