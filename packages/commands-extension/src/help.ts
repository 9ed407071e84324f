import { CommandUsageError, type CommandDefinition } from './command.js';
import type { CommandRegistry, RegisteredCommand } from './registry.js';

function usage(command: RegisteredCommand): string {
  return command.argumentHint ? `/${command.name} ${command.argumentHint}` : `/${command.name}`;
}

/**
 * `/help [<command>]`: lists the registry's commands, or describes one; register it like any
 * other command. `skipped` names command definitions that could not be loaded (the harness's
 * command files with errors), listed after the commands, which a user would otherwise never learn.
 */
export function helpCommand(registry: CommandRegistry, skipped: () => readonly string[] = () => []): CommandDefinition {
  return {
    name: 'help',
    description: 'List the commands, or describe one',
    argumentHint: '[<command>]',
    argumentValues: (audience) => [
      registry
        .offeredTo(audience === 'authenticated')
        .map((command) => ({ value: command.name, description: command.description })),
    ],
    handler: ({ args, callContext }) => {
      // A command offered to signed-in callers only is no command to anyone else, here too.
      const signedIn = callContext.user?.isAuthenticated === true;
      const commands = registry.offeredTo(signedIn);
      if (args) {
        const wanted = args.replace(/^\//, '');
        const command = registry.offers(wanted, signedIn) ? registry.get(wanted) : undefined;
        if (!command) {
          throw new CommandUsageError(
            `There is no command "${args}". The commands are: ${commands.map((c) => `/${c.name}`).join(', ')}.`,
          );
        }
        return {
          text: `${usage(command)}\n${command.description}`,
          data: {
            commands: [{ name: command.name, description: command.description, argument_hint: command.argumentHint }],
          },
        };
      }
      const lines = commands.map((command) => `${usage(command)} - ${command.description}`);
      const files = skipped();
      const skippedText = files.length
        ? `\n\nCommand files skipped (fix them and they load by themselves):\n${files.map((file) => `- ${file}`).join('\n')}`
        : '';
      return {
        text: `Commands (send one as the whole message):\n${lines.join('\n')}${skippedText}`,
        data: {
          commands: commands.map((c) => ({ name: c.name, description: c.description, argument_hint: c.argumentHint })),
        },
      };
    },
  };
}
