import type { Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { CommandCalls, type CommandCallsOptions } from '@tiny-harness/commands-extension';
import type { Step } from '../a2a/index.js';

/** What the `commands` step needs: the extension's options, and where a command reads its task. */
export interface CommandsStepOptions extends Omit<CommandCallsOptions, 'getTask'> {
  /**
   * Reads a task as the caller may see it: the request handler's own, so that a command reads
   * its task without going down the request path again.
   */
  getTask: (taskId: string, context: ServerCallContext) => Promise<Task>;
}

/**
 * The `commands` step: a command message is answered by the Commands extension and goes no
 * further; the extension is activated on every call that asked for it (CMD-17), and the
 * extended card gains its entry. The agent card's own entry is the request handler's.
 */
export function commandsStep(options: CommandsStepOptions): Step {
  const calls = new CommandCalls(options);
  return {
    name: 'commands',
    around(call, next) {
      calls.activate(call.context);
      switch (call.method) {
        case 'sendMessage':
          return calls.sendMessage(call.params, call.context, () => next(call));
        case 'sendMessageStream':
          return calls.sendMessageStream(call.params, call.context, () => next(call));
        case 'getAuthenticatedExtendedAgentCard':
          return next(call).then((card) => calls.card(card, 'authenticated'));
        default:
          return next();
      }
    },
  };
}
