/**
 * A command read from a file, and the registry entry that runs it: expand the template with
 * the arguments, start a sub-task on it, and reply at once with the sub-task's id (CMD-30).
 * The command never waits for the sub-task; the user follows it as an A2A task of its own.
 */
import { CommandUsageError, type CommandDefinition, type CommandResult } from '../commands/index.js';
import { isHarnessError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import type { SubtaskOptions, SubtaskStarter } from '../runtime/subtask-starter.js';
import type { CommandFileContent } from './front-matter.js';
import { expandedLength, expandTemplate, MAX_PROMPT_CHARS } from './template.js';

/** A checked command file: its name is the file name without `.md`. */
export interface FileCommand extends CommandFileContent {
  name: string;
  /** Where it was read from: the folder joined with the file name. For the log, never a reply. */
  path: string;
  /** The file name alone (`review.md`), which replies may name. */
  fileName: string;
}

/**
 * The registry entry for a file command. The handler holds this version of the file: a
 * sub-task started before the file changed or was removed keeps running as it was.
 * `log` receives a warning, naming the file but never the arguments, when a prompt is refused.
 */
export function fileCommandDefinition(
  command: FileCommand,
  starter: SubtaskStarter,
  log: Logger = silentLogger,
): CommandDefinition {
  const label = `/${command.name}`;
  return {
    name: command.name,
    description: command.description,
    ...(command.argumentHint !== undefined && { argumentHint: command.argumentHint }),
    handler: async ({ args, task, callContext }): Promise<CommandResult> => {
      // Measured before it is built: repeated $ARGUMENTS would otherwise multiply megabytes of arguments.
      const length = expandedLength(command.template, args);
      if (length > MAX_PROMPT_CHARS) {
        log.warn('file command refused: its expanded prompt is over the limit', {
          command: label,
          file: command.fileName,
          chars: length,
          limit: MAX_PROMPT_CHARS,
        });
        throw new CommandUsageError(
          `${label} with these arguments would make a prompt of ${length.toLocaleString('en-US')} characters, over the limit of ` +
            `${MAX_PROMPT_CHARS.toLocaleString('en-US')}: give shorter arguments.`,
        );
      }
      const prompt = expandTemplate(command.template, args);
      const options: SubtaskOptions = {
        callContext,
        label,
        ...(command.model !== undefined && { model: command.model }),
        ...(command.allowedTools !== undefined && { allowedTools: command.allowedTools }),
        ...(command.context !== undefined && { context: command.context }),
      };
      let id: string;
      try {
        id = await starter.start(task, prompt, options);
      } catch (error) {
        if (command.model !== undefined && isHarnessError(error) && error.code === 'model_unknown') {
          throw new CommandUsageError(
            `${label} asks for the model "${command.model}" (the "model:" line of ${command.fileName} in the commands folder), ` +
              'which this harness does not offer. Change or remove that line in the file; /model lists the models offered.',
          );
        }
        throw error;
      }
      const on = command.model !== undefined ? ` on ${command.model}` : '';
      return {
        text:
          `Started sub-task ${id} for ${label}${on}. It works as a task of its own with that id; ` +
          'when it ends, a note with its result appears here.',
        taskRef: id,
        data: { taskId: id },
      };
    },
  };
}
