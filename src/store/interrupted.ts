import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { textPart } from '../wire.js';

/**
 * Turns cut short by a crash or a restart. A task left SUBMITTED or WORKING in the store has
 * no turn running any more once the process is gone; nothing would ever finish it, and the
 * SDK would keep refusing nothing and answering nothing. At start-up the store moves each such
 * task to INPUT_REQUIRED with an agent message asking the user to send their message again.
 */

/** The states that mean "a turn is in flight". */
export const IN_FLIGHT_STATES: readonly TaskState[] = [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING];

/** A task whose turn was in flight when the store was last closed (or the process died). */
export interface InterruptedTask {
  id: string;
  contextId: string;
  tenant: string;
  owner: string;
  state: TaskState;
}

/** The recovery message: an agent message with one text part and a fresh id. */
export function interruptedTurnMessage(task: InterruptedTask, text: string): Message {
  return {
    messageId: randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}
