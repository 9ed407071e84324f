import { CommandUsageError, type CommandDefinition } from '@tiny-harness/commands-extension';
import { REPLY_ERROR_KEY } from '../../wire.js';
import type { ForkControl } from './ports.js';

/**
 * `/fork [n]`: copies the conversation (all of it, or up to point n, as `/rewind n` would leave
 * it) into a new task in a new context, and replies with its id (CMD-37).
 */
export function forkCommand(forks: ForkControl): CommandDefinition {
  return {
    name: 'fork',
    description: 'Copy this conversation (or its beginning, up to point n) into a new task',
    argumentHint: '[n]',
    handler: async ({ args, task, callContext }) => {
      if (args && !/^[1-9][0-9]{0,5}$/.test(args))
        throw new CommandUsageError(
          `"${args}" is not a point: send /fork to copy the whole conversation, or /fork n to copy it as it stood before your n-th newest message (1 = the newest).`,
        );
      const n = args ? Number(args) : undefined;
      const outcome = await forks.fork(task, n, callContext);
      if ('refused' in outcome)
        return { text: refusalText(outcome.refused, n, outcome.points), data: { [REPLY_ERROR_KEY]: outcome.refused } };
      const what =
        n === undefined
          ? 'this conversation'
          : `this conversation as it stood before your message ${n} (counted from the newest)`;
      return {
        text: `Forked ${what} into task ${outcome.taskId} (${outcome.messages} message${outcome.messages === 1 ? '' : 's'} copied), in a new context. Send your messages to that task to go on there; this one goes on as it was.`,
        data: { ...outcome },
        taskRef: outcome.taskId,
      };
    },
  };
}

function refusalText(
  refused: 'turn_running' | 'no_such_point' | 'nothing_to_fork',
  n: number | undefined,
  points = 0,
): string {
  switch (refused) {
    case 'turn_running':
      return 'A turn is running on this task: fork once it has ended (or /stop it first).';
    case 'no_such_point':
      return points === 0
        ? `There is no point ${n} to fork from: this task has no messages of yours yet.`
        : `There is no point ${n} to fork from: this task has ${points} message${points === 1 ? '' : 's'} of yours, so n goes from 1 (before the newest) to ${points}.`;
    case 'nothing_to_fork':
      return 'Nothing to fork: the conversation is empty.';
  }
}
