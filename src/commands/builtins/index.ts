import type { CommandRegistry } from '../registry.js';
import { helpCommand } from './help.js';
import { modelCommand } from './model.js';
import type { ModelControl, SubtaskControl, TaskReporter, ToolDirectory } from './ports.js';
import { spawnCommand } from './spawn.js';
import { statusCommand } from './status.js';
import { toolsCommand } from './tools.js';

export type { ModelChoice, ModelControl, SubtaskControl, TaskReport, TaskReporter, ToolDirectory, ToolServerReport, UsageLine } from './ports.js';

/**
 * Registers the built-in commands in their documented order: help, model, status, spawn, then
 * tools when tool servers are configured (a deployment without them is not offered a command
 * that could only say so).
 */
export function registerBuiltinCommands(
  registry: CommandRegistry,
  harness: { models: ModelControl; reporter: TaskReporter; subtasks: SubtaskControl; tools?: ToolDirectory },
): void {
  registry.register(helpCommand(registry));
  registry.register(modelCommand(harness.models));
  registry.register(statusCommand(harness.reporter));
  registry.register(spawnCommand(harness.subtasks));
  if (harness.tools) registry.register(toolsCommand(harness.tools));
}
