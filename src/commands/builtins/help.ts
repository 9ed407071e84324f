import { CommandUsageError, type CommandDefinition } from '../command.js';
import type { CommandRegistry, RegisteredCommand } from '../registry.js';

function usage(command: RegisteredCommand): string {
  return command.argumentHint ? `/${command.name} ${command.argumentHint}` : `/${command.name}`;
}

/** `/help [<command>]`: lists the commands, or describes one. */
export function helpCommand(registry: CommandRegistry): CommandDefinition {
  return {
    name: 'help',
    description: 'List the commands, or describe one',
    argumentHint: '[<command>]',
    argumentValues: () => [registry.list().map((command) => ({ value: command.name, description: command.description }))],
    handler: ({ args }) => {
      const commands = registry.list();
      if (args) {
        const wanted = args.replace(/^\//, '');
        const command = registry.get(wanted);
        if (!command) {
          throw new CommandUsageError(`There is no command "${args}". The commands are: ${commands.map((c) => `/${c.name}`).join(', ')}.`);
        }
        return {
          text: `${usage(command)}\n${command.description}`,
          data: { commands: [{ name: command.name, description: command.description, argument_hint: command.argumentHint }] },
        };
      }
      const lines = commands.map((command) => `${usage(command)} - ${command.description}`);
      return {
        text: `Commands (send one as the whole message):\n${lines.join('\n')}`,
        data: { commands: commands.map((c) => ({ name: c.name, description: c.description, argument_hint: c.argumentHint })) },
      };
    },
  };
}
