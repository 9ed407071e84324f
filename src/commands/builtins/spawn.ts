import { CommandUsageError, type CommandDefinition } from '@tiny-harness/commands-extension';
import type { SubtaskControl } from './ports.js';

/** `/spawn <instruction>`: starts a sub-task on the instruction and replies at once with its id (CMD-30). */
export function spawnCommand(subtasks: SubtaskControl): CommandDefinition {
  return {
    name: 'spawn',
    description: 'Start a sub-task that works on the instruction',
    argumentHint: '<instruction>',
    handler: async ({ args, task, callContext }) => {
      if (!args)
        throw new CommandUsageError('Say what the sub-task should do, e.g. /spawn summarise the discussion so far.');
      const id = await subtasks.start(task, args, { callContext, label: '/spawn' });
      return {
        text: `Started sub-task ${id}. It works on its own, as a task of its own with that id. When it ends, a note with its result appears here.`,
        data: { taskId: id },
        taskRef: id,
      };
    },
  };
}
