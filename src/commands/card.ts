import type { AgentCard, AgentExtension } from '@a2a-js/sdk';
import { COMMANDS_EXTENSION_URI } from '../wire.js';
import type { CommandRegistry } from './registry.js';

/** The card `params` of the extension: exactly `{commands: [{name, description, argument_hint}]}`. */
export function commandsExtensionParams(registry: CommandRegistry): { commands: Array<{ name: string; description: string; argument_hint: string }> } {
  return {
    commands: registry.list().map((command) => ({
      name: command.name,
      description: command.description,
      argument_hint: command.argumentHint,
    })),
  };
}

/** The card's extension entry (CMD-14): optional, with every registered command in order. */
export function commandsExtension(registry: CommandRegistry): AgentExtension {
  return {
    uri: COMMANDS_EXTENSION_URI,
    description: 'Slash commands: a message that is exactly /<name> <arguments> runs that command instead of reaching the model.',
    required: false,
    params: commandsExtensionParams(registry),
  };
}

/**
 * Returns `card` with exactly one commands extension entry, built from the registry now.
 * Any entry with the same URI already on the card is replaced rather than duplicated.
 */
export function withCommandsExtension(card: AgentCard, registry: CommandRegistry): AgentCard {
  const others = (card.capabilities?.extensions ?? []).filter((extension) => extension.uri !== COMMANDS_EXTENSION_URI);
  return {
    ...card,
    capabilities: {
      ...card.capabilities,
      extensions: [...others, commandsExtension(registry)],
    },
  };
}
