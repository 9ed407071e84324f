/**
 * MCP prompts as commands, as Gemini CLI offers them: each prompt of a connected server is a
 * command on the card (CMD-14), named by the extension's rule, described and hinted by the
 * server, kept in step with the server's `prompts/list_changed` (CMD-16). Running one reads the
 * prompt with the arguments given (`$ARGUMENTS`, word by word, the last argument taking the
 * rest) and starts a sub-task on its text, as a command file does (CMD-30).
 *
 * A name taken already (a built-in, an embedder's command, a command file, another server's
 * prompt registered first) is not replaced: the prompt is skipped, with a log line. A server
 * that goes away keeps its prompt commands; using one then says the server cannot be reached.
 */
import {
  CommandUsageError,
  type CommandDefinition,
  type CommandRegistry,
  type CommandVisibility,
  type RegisteredCommand,
} from '../commands/index.js';
import { PromptUnavailable, type PromptEntry } from '../tools/index.js';
import type { Logger } from '../log.js';
import { COMMAND_NAME_PATTERN } from '../wire.js';
import type { SubtaskStarter } from '../engine-ports.js';

/** What prompt commands need of the tool servers. */
export interface PromptSource {
  prompts(): PromptEntry[];
  getPrompt(server: string, name: string, args: Record<string, string>): Promise<string>;
  onPromptsChanged(listener: () => void): void;
}

/**
 * A prompt's name by the command-name rule, or undefined when nothing of it is left: lower
 * case; white space, `_`, `.` and `/` become `-`; other characters are dropped; runs of `-`
 * become one; leading characters up to the first letter and trailing `-` are dropped.
 */
export function commandNameOf(promptName: string): string | undefined {
  const name = promptName
    .toLowerCase()
    .replace(/[\s_./]+/g, '-')
    .replace(/[^a-z0-9-]/g, '')
    .replace(/-+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '');
  return COMMAND_NAME_PATTERN.test(name) ? name : undefined;
}

/** The hint of a prompt's arguments: `<required> [optional]`, in the server's order. */
export function argumentHintOf(prompt: Pick<PromptEntry, 'arguments'>): string {
  return prompt.arguments.map((arg) => (arg.required ? `<${arg.name}>` : `[${arg.name}]`)).join(' ');
}

/**
 * `$ARGUMENTS` as the prompt's arguments: one word each, in order, the last argument taking
 * the rest of the text. Throws a usage error naming the required arguments left out.
 */
export function promptArguments(prompt: Pick<PromptEntry, 'arguments'>, args: string): Record<string, string> {
  const words = args.trim() === '' ? [] : args.trim().split(/\s+/);
  const values: Record<string, string> = {};
  prompt.arguments.forEach((arg, index) => {
    const last = index === prompt.arguments.length - 1;
    const value = last ? words.slice(index).join(' ') : words[index];
    if (value) values[arg.name] = value;
  });
  const missing = prompt.arguments
    .filter((arg) => arg.required && values[arg.name] === undefined)
    .map((arg) => arg.name);
  if (missing.length > 0) {
    throw new CommandUsageError(
      `Missing ${missing.length === 1 ? 'argument' : 'arguments'}: ${missing.join(', ')}. Usage: ${argumentHintOf(prompt)}`,
    );
  }
  return values;
}

export class PromptCommands {
  /** What this registered, by command name: the exact objects, so another's same-named entry is never removed. */
  private registered = new Map<string, { command: RegisteredCommand; key: string }>();
  /** Skips already logged, so that a list read again does not repeat them. */
  private readonly told = new Set<string>();

  constructor(
    private readonly options: {
      registry: CommandRegistry;
      source: PromptSource;
      starter: SubtaskStarter;
      log: Logger;
      /** Who a server's prompts are offered to (`mcpServers.<name>.visibility`); default `public`. */
      visibility?: (server: string) => CommandVisibility | undefined;
    },
  ) {}

  /** Registers the prompts listed now, and follows their changes from here on. */
  start(): void {
    this.sync();
    this.options.source.onPromptsChanged(() => this.sync());
  }

  /** The registry in step with the prompts listed now. */
  sync(): void {
    const { registry, source, log } = this.options;
    const wanted = new Map<string, { prompt: PromptEntry; key: string }>();
    for (const prompt of source.prompts()) {
      const key = `${prompt.server}\u0000${prompt.name}\u0000${prompt.description}\u0000${argumentHintOf(prompt)}`;
      const name = commandNameOf(prompt.name);
      const skip = (why: string) => {
        if (!this.told.has(key)) log.warn(`MCP prompt skipped: ${why}`, { server: prompt.server, prompt: prompt.name });
        this.told.add(key);
      };
      if (!name) skip('its name has nothing a command name can use');
      else if (wanted.has(name) || (registry.has(name) && !this.registered.has(name)))
        skip(`the command /${name} exists already`);
      else wanted.set(name, { prompt, key });
    }
    for (const [name, mine] of this.registered) {
      if (wanted.get(name)?.key === mine.key) continue;
      if (registry.get(name) === mine.command) registry.unregister(name);
      this.registered.delete(name);
    }
    for (const [name, { prompt, key }] of wanted) {
      if (this.registered.has(name)) continue;
      this.registered.set(name, { command: registry.register(this.definition(name, prompt)), key });
    }
  }

  private definition(name: string, prompt: PromptEntry): CommandDefinition {
    const label = `/${name}`;
    return {
      name,
      description: `${prompt.description || `The prompt "${prompt.name}"`} (${prompt.server})`,
      argumentHint: argumentHintOf(prompt),
      visibility: this.options.visibility?.(prompt.server),
      handler: async ({ args, task, callContext }) => {
        const values = promptArguments(prompt, args);
        let text: string;
        try {
          text = await this.options.source.getPrompt(prompt.server, prompt.name, values);
        } catch (error) {
          if (error instanceof PromptUnavailable)
            throw new CommandUsageError(`${label} could not be read: ${error.message}`);
          throw error;
        }
        if (!text.trim())
          throw new CommandUsageError(`${label}: the MCP server "${prompt.server}" gave an empty prompt.`);
        const id = await this.options.starter.start(task, text, { callContext, label });
        return {
          text: `Started sub-task ${id} for ${label} (a prompt of ${prompt.server}). It works as a task of its own; when it ends, a note with its result appears here.`,
          taskRef: id,
          data: { taskId: id },
        };
      },
    };
  }
}
