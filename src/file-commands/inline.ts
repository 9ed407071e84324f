import type { CommandResult } from '../commands/index.js';
import type { CommandTurn } from '../engine-ports.js';

/**
 * The reply of a command run inline (CMD-38): it started (its turn follows the reply on the same
 * task), it waits behind the running turn, or a turn runs and nothing started. `data.inline` says
 * which, for clients: `started`, `queued` or `busy`.
 */
export function inlineResult(label: string, turn: CommandTurn, model?: string): CommandResult {
  const on = model !== undefined ? ` on ${model}` : '';
  if (turn.kind === 'busy')
    return {
      text:
        `A turn is running on this task, so ${label} started nothing. Send it again once the turn has ended ` +
        '(or after /stop), or with the message metadata "tiny-harness/while-busy" set to "enqueue" to run it next.',
      data: { inline: 'busy' },
    };
  if (turn.kind === 'queued')
    return {
      text: `${label} waits behind the running turn; its prompt then runs here${on}, as a turn of this task.`,
      data: { inline: 'queued' },
      followUp: turn.run,
    };
  return {
    text: `${label} started: its prompt runs here${on}, as a turn of this task.`,
    data: { inline: 'started' },
    followUp: turn.run,
  };
}
