import { TaskState } from '@a2a-js/sdk';

/** How a turn's work came out, before it is told as the task's final status. */
export type TurnOutcome =
  | { kind: 'replied'; text: string; model: string }
  | { kind: 'stopped'; text: string; model: string }
  | { kind: 'canceled' }
  | { kind: 'interrupted' }
  | { kind: 'store-failure' }
  | { kind: 'model-failure'; reason: string };

/** The mark a stopped reply ends with: the person reading and the model in later turns both see it was cut (CMD-32). */
export const STOPPED_MARK = '[stopped by the user]';

/** A stopped turn's reply: what the model wrote so far, marked. */
export function stoppedText(written: string): string {
  return written.trim()
    ? `${written.trimEnd()}\n\n${STOPPED_MARK}`
    : `${STOPPED_MARK} (before the model wrote anything)`;
}

/** Said when a turn was cut short by the server stopping, now or in a crash found at start-up. */
export const INTERRUPTED_TEXT =
  'This turn was interrupted because the server stopped before it finished. Send your message again to continue.';

/** Said when a sub-task's one turn was cut short by the server stopping, now or in a crash found at start-up. */
export const SUBTASK_INTERRUPTED_TEXT = 'The sub-task was interrupted because the server stopped before it finished.';

/** Said when the store failed while a turn ended, so that it could not end as it should. */
export const STORE_FAILURE_TEXT =
  'This turn failed because the server could not read the task from its store. The failure is in the server log.';

/** Said when a turn was cut short by its store failing under it (the database connection was lost). */
export const STORE_INTERRUPTED_TEXT =
  "This turn was interrupted because the server's database failed. Send your message again to continue.";

/** The same, for a sub-task's one turn. */
export const SUBTASK_STORE_INTERRUPTED_TEXT = "The sub-task was interrupted because the server's database failed.";

/**
 * How a turn of a conversation ends: waiting for the next message (or COMPLETED, when the
 * harness is so configured), unless canceled.
 */
export function conversationEnd(outcome: TurnOutcome, endState: TaskState): { state: TaskState; text: string } {
  switch (outcome.kind) {
    case 'replied':
      return { state: endState, text: outcome.text };
    case 'stopped':
      return { state: endState, text: stoppedText(outcome.text) };
    case 'canceled':
      return { state: TaskState.TASK_STATE_CANCELED, text: 'The turn was canceled.' };
    case 'interrupted':
      return { state: TaskState.TASK_STATE_INPUT_REQUIRED, text: INTERRUPTED_TEXT };
    case 'store-failure':
      return { state: TaskState.TASK_STATE_INPUT_REQUIRED, text: STORE_INTERRUPTED_TEXT };
    case 'model-failure':
      return {
        state: TaskState.TASK_STATE_INPUT_REQUIRED,
        text: `${outcome.reason} Send the message again to retry, or use /model to switch to another model (/model alone lists them).`,
      };
  }
}

/** A sub-task has one turn: it ends COMPLETED with its result, or FAILED saying why. */
export function subtaskEnd(outcome: TurnOutcome): { state: TaskState; text: string } {
  switch (outcome.kind) {
    case 'replied':
      return { state: TaskState.TASK_STATE_COMPLETED, text: outcome.text };
    case 'stopped':
      return { state: TaskState.TASK_STATE_COMPLETED, text: stoppedText(outcome.text) };
    case 'canceled':
      return { state: TaskState.TASK_STATE_CANCELED, text: 'The sub-task was canceled.' };
    case 'interrupted':
      return { state: TaskState.TASK_STATE_FAILED, text: SUBTASK_INTERRUPTED_TEXT };
    case 'store-failure':
      return { state: TaskState.TASK_STATE_FAILED, text: SUBTASK_STORE_INTERRUPTED_TEXT };
    case 'model-failure':
      return { state: TaskState.TASK_STATE_FAILED, text: outcome.reason };
  }
}
