import type { AgentCard, AgentExtension } from '@a2a-js/sdk';
import { COMMAND_ARGUMENTS_EXTENSION_URI, COMMANDS_EXTENSION_URI, type ArgumentValues } from './wire.js';
import type { CommandRegistry } from './registry.js';
import type { CardAudience } from './command.js';

export type { CardAudience } from './command.js';

/** The card `params` of the extension: exactly `{commands: [{name, description, argument_hint}]}`. */
export function commandsExtensionParams(
  registry: CommandRegistry,
  audience: CardAudience = 'public',
): {
  commands: Array<{ name: string; description: string; argument_hint: string }>;
} {
  return {
    commands: registry.offeredTo(audience === 'authenticated').map((command) => ({
      name: command.name,
      description: command.description,
      argument_hint: command.argumentHint,
    })),
  };
}

/** The card's extension entry (CMD-14): optional, with every registered command in order. */
export function commandsExtension(registry: CommandRegistry, audience: CardAudience = 'public'): AgentExtension {
  return {
    uri: COMMANDS_EXTENSION_URI,
    description:
      'Slash commands: a message that is exactly /<name> <arguments> runs that command instead of reaching the model.',
    required: false,
    params: commandsExtensionParams(registry, audience),
  };
}

/** The command-arguments extension's `params`: the values each command offers now, in registry order. */
export function commandArgumentsParams(
  registry: CommandRegistry,
  audience: CardAudience = 'public',
): { arguments: ArgumentValues[] } {
  const entries: ArgumentValues[] = [];
  for (const command of registry.offeredTo(audience === 'authenticated')) {
    const positions = command.argumentValues?.(audience) ?? [];
    positions.forEach((values, position) => {
      if (values?.length) entries.push({ command: command.name, position, values: values.map((v) => ({ ...v })) });
    });
  }
  return { arguments: entries };
}

/** The command-arguments entry (spec/command-arguments-extension-v1.md), or none when no command offers values. */
export function commandArgumentsExtension(
  registry: CommandRegistry,
  audience: CardAudience = 'public',
): AgentExtension | undefined {
  const params = commandArgumentsParams(registry, audience);
  if (params.arguments.length === 0) return undefined;
  return {
    uri: COMMAND_ARGUMENTS_EXTENSION_URI,
    description: 'The values the arguments of the slash commands can take, for clients to complete them.',
    required: false,
    params,
  };
}

/**
 * Returns `card` with exactly one commands extension entry, built from the registry now, and
 * the command-arguments entry beside it when a command offers argument values. Entries with
 * the same URIs already on the card are replaced rather than duplicated. `audience`: the public
 * card (the default) leaves out the commands offered to signed-in callers only.
 */
export function withCommandsExtension(
  card: AgentCard,
  registry: CommandRegistry,
  audience: CardAudience = 'public',
): AgentCard {
  const ours = new Set([COMMANDS_EXTENSION_URI, COMMAND_ARGUMENTS_EXTENSION_URI]);
  const others = (card.capabilities?.extensions ?? []).filter((extension) => !ours.has(extension.uri));
  const argumentsEntry = commandArgumentsExtension(registry, audience);
  return {
    ...card,
    capabilities: {
      ...card.capabilities,
      extensions: [...others, commandsExtension(registry, audience), ...(argumentsEntry ? [argumentsEntry] : [])],
    },
  };
}
