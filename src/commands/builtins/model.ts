import type { CommandDefinition } from '@tiny-harness/commands-extension';
import type { ModelChoice, ModelControl } from './ports.js';
import { fullModelId, REPLY_ERROR_KEY } from '../../wire.js';

function listing(current: string, choices: ModelChoice[]): string {
  return choices
    .map(
      (choice) =>
        `${choice.id === current ? '* ' : '  '}${choice.id}${choice.description ? ` - ${choice.description}` : ''}`,
    )
    .join('\n');
}

/** `/model [<model>]`: shows the task's model and the choices, or sets it (CMD-20, CMD-21). */
export function modelCommand(models: ModelControl): CommandDefinition {
  return {
    name: 'model',
    description: "Show or choose this task's model",
    argumentHint: '[<model>]',
    argumentValues: () => [
      models
        .offered()
        .map((choice) => ({ value: choice.id, ...(choice.description ? { description: choice.description } : {}) })),
    ],
    handler: async ({ args: typed, task, callContext }) => {
      const { current, choices } = await models.describe(task, callContext);
      const args = fullModelId(
        typed,
        choices.map((choice) => choice.id),
      );
      const data = (now: string) => ({
        current: now,
        models: choices.map((choice) => ({ ...choice, current: choice.id === now })),
      });
      if (!args) {
        return {
          text: `This task uses ${current}. Models you can choose (current marked *):\n${listing(current, choices)}\nSend /model <model> to switch.`,
          data: data(current),
        };
      }
      if (!(await models.choose(task, args, callContext))) {
        return {
          text: `Unknown model "${args}"; the task still uses ${current}. Choose one of:\n${listing(current, choices)}`,
          data: { ...data(current), [REPLY_ERROR_KEY]: 'model_unknown' },
        };
      }
      return { text: `This task now uses ${args} (it was ${current}).`, data: data(args) };
    },
  };
}
