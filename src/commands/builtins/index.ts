import type { CommandRegistry } from '../registry.js';
import { helpCommand } from './help.js';
import { modelCommand } from './model.js';
import type { ModelControl, SubtaskControl, TaskReporter } from './ports.js';
import { spawnCommand } from './spawn.js';
import { statusCommand } from './status.js';

export type { ModelChoice, ModelControl, SubtaskControl, TaskReport, TaskReporter, UsageLine } from './ports.js';

/** Registers the built-in commands in their documented order: help, model, status, spawn. */
export function registerBuiltinCommands(
  registry: CommandRegistry,
  harness: { models: ModelControl; reporter: TaskReporter; subtasks: SubtaskControl },
): void {
  registry.register(helpCommand(registry));
  registry.register(modelCommand(harness.models));
  registry.register(statusCommand(harness.reporter));
  registry.register(spawnCommand(harness.subtasks));
}
