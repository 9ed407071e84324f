import { TaskState } from '@a2a-js/sdk';

/** The state a finished turn leaves its task in, as config `turnEndState` names it. */
export function endStateOf(
  setting: 'completed' | 'input-required',
): TaskState.TASK_STATE_COMPLETED | TaskState.TASK_STATE_INPUT_REQUIRED {
  return setting === 'completed' ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_INPUT_REQUIRED;
}

/** How a turn's work came out, before it is told as the task's final status. */
export type TurnOutcome =
  | { kind: 'replied'; text: string; model: string }
  | { kind: 'stopped'; text: string; model: string }
  | { kind: 'canceled' }
  | { kind: 'interrupted' }
  /** The store failed under the turn: `text`, what the model wrote until then, is kept. */
  | { kind: 'store-failure'; text: string; model: string }
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

/** Said when a turn was cut short by its store failing under it (the database connection was lost). */
export const STORE_INTERRUPTED_TEXT =
  "This turn was interrupted because the server's database failed. Send your message again to continue.";

/** The same, for a sub-task's one turn. */
export const SUBTASK_STORE_INTERRUPTED_TEXT = "The sub-task was interrupted because the server's database failed.";

/** The mark a reply cut short by a store failure ends with: what the client saw streamed is kept, and said to be cut. */
export const STORE_INTERRUPTED_MARK =
  "[interrupted: the server's database failed before this reply was finished. Send your message again to continue.]";

/**
 * How a turn ends, as its final status says it: the state, the text, and the notice kind when
 * the text is the harness's (a failure, an interruption) rather than the model's.
 */
export interface TurnEndStatus {
  state: TaskState;
  text: string;
  notice?: TurnOutcome['kind'];
}

/**
 * How a turn of a conversation ends: waiting for the next message (or COMPLETED, when the
 * harness is so configured), unless canceled. A store failure never ends the conversation: the
 * task waits for the message again, keeping what the model wrote, which its client saw streamed.
 */
export function conversationEnd(outcome: TurnOutcome, endState: TaskState): TurnEndStatus {
  const input = TaskState.TASK_STATE_INPUT_REQUIRED;
  switch (outcome.kind) {
    case 'replied':
      return { state: endState, text: outcome.text };
    case 'stopped':
      return { state: endState, text: stoppedText(outcome.text) };
    case 'canceled':
      return { state: TaskState.TASK_STATE_CANCELED, text: 'The turn was canceled.', notice: 'canceled' };
    case 'interrupted':
      return { state: input, text: INTERRUPTED_TEXT, notice: 'interrupted' };
    case 'store-failure':
      return outcome.text.trim()
        ? { state: input, text: `${outcome.text.trimEnd()}\n\n${STORE_INTERRUPTED_MARK}` }
        : { state: input, text: STORE_INTERRUPTED_TEXT, notice: 'store-failure' };
    case 'model-failure':
      return {
        state: input,
        text: `${outcome.reason} Send the message again to retry, or use /model to switch to another model (/model alone lists them).`,
        notice: 'model-failure',
      };
  }
}

/** A sub-task has one turn: it ends COMPLETED with its result, or FAILED saying why. */
export function subtaskEnd(outcome: TurnOutcome): TurnEndStatus {
  const failed = TaskState.TASK_STATE_FAILED;
  switch (outcome.kind) {
    case 'replied':
      return { state: TaskState.TASK_STATE_COMPLETED, text: outcome.text };
    case 'stopped':
      return { state: TaskState.TASK_STATE_COMPLETED, text: stoppedText(outcome.text) };
    case 'canceled':
      return { state: TaskState.TASK_STATE_CANCELED, text: 'The sub-task was canceled.', notice: 'canceled' };
    case 'interrupted':
      return { state: failed, text: SUBTASK_INTERRUPTED_TEXT, notice: 'interrupted' };
    case 'store-failure':
      return { state: failed, text: SUBTASK_STORE_INTERRUPTED_TEXT, notice: 'store-failure' };
    case 'model-failure':
      return { state: failed, text: outcome.reason, notice: 'model-failure' };
  }
}
