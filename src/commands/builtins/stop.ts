import type { CommandDefinition } from '@tiny-harness/commands-extension';
import type { TurnControl } from './ports.js';

/**
 * `/stop`: ends the running turn as a finished turn ends (CMD-32), what the model wrote so far
 * kept and marked; the conversation goes on. The reply comes first (the state unchanged, so
 * WORKING), then the turn is stopped: stopping it first could end it before the reply, and the
 * reply would come after the turn's last status.
 */
export function stopCommand(turns: TurnControl): CommandDefinition {
  return {
    name: 'stop',
    description: 'Stop the running turn, keeping what the model wrote so far; the conversation goes on',
    handler: async ({ task }) => {
      if (!(await turns.isRunning(task))) return { text: 'Nothing to stop: no turn is running on this task.' };
      return {
        text: 'Stopping the turn. What the model wrote so far is kept, marked as stopped.',
        // eslint-disable-next-line require-yield -- the stop's own events are the turn's, on its streams
        followUp: async function* () {
          await turns.stop(task);
        },
      };
    },
  };
}
