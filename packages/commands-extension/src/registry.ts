import { COMMAND_NAME_PATTERN } from './wire.js';
import type { CommandDefinition, CommandVisibility } from './command.js';

/** A registered command with its argument hint resolved. */
export type RegisteredCommand = CommandDefinition & { argumentHint: string };

/** Raised when a command cannot be registered; the message names the offender (CMD-15). */
export class CommandRegistrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandRegistrationError';
  }
}

/**
 * The commands the harness answers, in registration order (CMD-14). The card is built from
 * it on every request, so a change shows on the card at once (CMD-16).
 */
export class CommandRegistry {
  private readonly commands = new Map<string, RegisteredCommand>();

  /**
   * `visibility`: who a command is offered to, decided here over the definition's own (an
   * operator's configuration naming commands it did not write); undefined keeps the definition's.
   */
  constructor(
    private readonly options: { visibility?: (command: RegisteredCommand) => CommandVisibility | undefined } = {},
  ) {}

  /** Adds a command; refuses a malformed or taken name and an empty description (CMD-15). */
  register(definition: CommandDefinition): RegisteredCommand {
    const { name, description } = definition;
    if (typeof name !== 'string' || !COMMAND_NAME_PATTERN.test(name)) {
      throw new CommandRegistrationError(
        `Command name ${JSON.stringify(name)} is not valid: it must match ${COMMAND_NAME_PATTERN.source} (lower-case letters, digits and "-", starting with a letter).`,
      );
    }
    if (this.commands.has(name)) {
      throw new CommandRegistrationError(`Command name "${name}" is already registered.`);
    }
    if (typeof description !== 'string' || description.trim() === '') {
      throw new CommandRegistrationError(`Command "${name}" needs a non-empty description.`);
    }
    if (typeof definition.handler !== 'function') {
      throw new CommandRegistrationError(`Command "${name}" needs a handler function.`);
    }
    const registered: RegisteredCommand = { ...definition, argumentHint: definition.argumentHint ?? '' };
    this.commands.set(name, registered);
    return registered;
  }

  /** Removes a command; returns whether it was registered. Replies already sent stay as they are. */
  unregister(name: string): boolean {
    return this.commands.delete(name);
  }

  has(name: string): boolean {
    return this.commands.has(name);
  }

  get(name: string): RegisteredCommand | undefined {
    return this.commands.get(name);
  }

  /** Every command, in registration order. */
  list(): RegisteredCommand[] {
    return [...this.commands.values()];
  }

  /** Who `command` is offered to: the registry's option, else the definition's, else `public`. */
  visibilityOf(command: RegisteredCommand): CommandVisibility {
    return this.options.visibility?.(command) ?? command.visibility ?? 'public';
  }

  /** The commands offered to a caller, in registration order: an anonymous one sees the public ones only. */
  offeredTo(authenticated: boolean): RegisteredCommand[] {
    return this.list().filter((command) => authenticated || this.visibilityOf(command) === 'public');
  }

  /** Whether `name` is a command for a caller: a command offered to others only is no command to it. */
  offers(name: string, authenticated: boolean): boolean {
    const command = this.commands.get(name);
    return command !== undefined && (authenticated || this.visibilityOf(command) === 'public');
  }
}
