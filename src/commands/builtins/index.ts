import type { CommandRegistry } from '../registry.js';
import { helpCommand } from './help.js';
import { modelCommand } from './model.js';
import type { ModelControl, TaskReporter } from './ports.js';
import { statusCommand } from './status.js';

export type { ModelChoice, ModelControl, TaskReport, TaskReporter, UsageLine } from './ports.js';

/** Registers the built-in commands in their documented order: help, model, status. */
export function registerBuiltinCommands(registry: CommandRegistry, harness: { models: ModelControl; reporter: TaskReporter }): void {
  registry.register(helpCommand(registry));
  registry.register(modelCommand(harness.models));
  registry.register(statusCommand(harness.reporter));
}
