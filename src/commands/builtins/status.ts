import type { CommandDefinition } from '../command.js';
import type { TaskReporter } from './ports.js';

/** `/status`: the task's state, model, token usage by model, and whether a turn is running. */
export function statusCommand(reporter: TaskReporter): CommandDefinition {
  return {
    name: 'status',
    description: "Show this task's state, model, token usage and whether a turn is running",
    handler: async ({ task, callContext }) => {
      const report = await reporter.report(task, callContext);
      const usage = report.usage.length
        ? report.usage.map((line) => `  ${line.model}: ${line.inputTokens} in, ${line.outputTokens} out`).join('\n')
        : '  none yet';
      const text = [
        `Task ${task.id}`,
        `State: ${report.state}`,
        `Model: ${report.model}`,
        `Turn running: ${report.turnRunning ? 'yes' : 'no'}`,
        `Tokens used:`,
        usage,
        `Sub-tasks:`,
        report.subtasks.length ? report.subtasks.map((sub) => `  ${sub.id}: ${sub.state}`).join('\n') : '  none',
      ].join('\n');
      return { text, data: { taskId: task.id, ...report } };
    },
  };
}
