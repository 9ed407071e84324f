import { TaskState } from '@a2a-js/sdk';
import type { CommandDefinition } from '@tiny-harness/commands-extension';
import { stateName } from '../../wire.js';
import type { TaskReporter } from './ports.js';

/**
 * `/status`: the task's state, model, token usage by model, and whether a turn is running. The
 * text names states as people say them (`input required`); the data keeps the protocol's names.
 */
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
        `State: ${stateName(TaskState[report.state as keyof typeof TaskState])}`,
        `Model: ${report.model}`,
        `Turn running: ${report.turnRunning ? 'yes' : 'no'}`,
        `Queued messages: ${report.queued.length}`,
        ...report.queued.map((queued, i) => `  ${i + 1}. ${queued.preview}`),
        `Tokens used:`,
        usage,
        `Sub-tasks:`,
        report.subtasks.length
          ? report.subtasks
              .map((sub) => `  ${sub.id}: ${stateName(TaskState[sub.state as keyof typeof TaskState])}`)
              .join('\n')
          : '  none',
        ...(report.pushFailed
          ? [`Push notifications failed: ${report.pushFailed} (out of retries; kept, see the log)`]
          : []),
      ].join('\n');
      return { text, data: { taskId: task.id, ...report } };
    },
  };
}
