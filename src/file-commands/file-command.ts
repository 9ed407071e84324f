/**
 * A command read from a file, and the registry entry that runs it: expand the template with the
 * arguments and the file's markers, then run the prompt inline, as a turn on the task the command
 * was sent to (CMD-38), or, with `context: fork` or `none`, as a sub-task (CMD-30). Either way the
 * command replies at once: it never waits for the turn or the sub-task.
 */
import { CommandUsageError, type CommandDefinition, type CommandResult } from '../commands/index.js';
import { isHarnessError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import type { CommandStarter, SubtaskOptions } from '../engine-ports.js';
import type { CommandFileContent } from './front-matter.js';
import { expandMarkers, type MarkerGrants } from './markers.js';
import { expandedLength, MAX_PROMPT_CHARS } from './template.js';
import { inlineResult } from './inline.js';

/** A checked command file: its name is the file name without `.md`. */
export interface FileCommand extends CommandFileContent {
  name: string;
  /** Where it was read from: the folder joined with the file name. For the log, never a reply. */
  path: string;
  /** The file name alone (`review.md`), which replies may name. */
  fileName: string;
}

/**
 * The registry entry for a file command. The handler holds this version of the file: a turn or
 * sub-task started before the file changed or was removed keeps running as it was. `log`
 * receives a warning, naming the file but never the arguments, when a prompt is refused.
 * `grants`: what the configuration lets the file's markers do (none: markers are refused).
 */
export function fileCommandDefinition(
  command: FileCommand,
  starter: CommandStarter,
  log: Logger = silentLogger,
  grants?: MarkerGrants,
): CommandDefinition {
  const label = `/${command.name}`;
  return {
    name: command.name,
    description: command.description,
    ...(command.argumentHint !== undefined && { argumentHint: command.argumentHint }),
    handler: async ({ args, task, callContext, message }): Promise<CommandResult> => {
      // Measured before it is built: repeated $ARGUMENTS would otherwise multiply megabytes of arguments.
      tooLong(expandedLength(command.template, args));
      const prompt = await expandMarkers(command.template, args, { label, ...command }, grants);
      tooLong(prompt.length);
      try {
        if (command.context === undefined) {
          const { model, allowedTools } = command;
          const turn = await starter.prepare(task, prompt, {
            callContext,
            label,
            message,
            ...(model !== undefined && { model }),
            ...(allowedTools !== undefined && { allowedTools }),
          });
          return inlineResult(label, turn, command.model);
        }
        return await forked(prompt, {
          callContext,
          label,
          ...(command.model !== undefined && { model: command.model }),
          ...(command.allowedTools !== undefined && { allowedTools: command.allowedTools }),
          ...(command.context === 'none' && { context: 'none' }),
        });
      } catch (error) {
        if (command.model !== undefined && isHarnessError(error) && error.code === 'model_unknown') {
          throw new CommandUsageError(
            `${label} asks for the model "${command.model}" (the "model:" line of ${command.fileName} in the commands folder), ` +
              'which this harness does not offer. Change or remove that line in the file; /model lists the models offered.',
          );
        }
        throw error;
      }

      async function forked(instruction: string, options: SubtaskOptions): Promise<CommandResult> {
        const id = await starter.start(task, instruction, options);
        const on = command.model !== undefined ? ` on ${command.model}` : '';
        return {
          text:
            `Started sub-task ${id} for ${label}${on}. It works as a task of its own with that id; ` +
            'when it ends, a note with its result appears here.',
          taskRef: id,
          data: { taskId: id },
        };
      }

      function tooLong(length: number): void {
        if (length <= MAX_PROMPT_CHARS) return;
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
    },
  };
}
