import type { Message } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { HarnessError } from '../errors.js';
import { isTerminal } from '../wire.js';
import type { TaskSnapshot } from '../ports.js';

/**
 * The message's task, which the caller must see and which must take messages (the SDK's
 * rules), as a turn and a queued message alike check it before anything is stored.
 */
export async function openableTask(
  view: { read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined> },
  message: Message,
  context: ServerCallContext,
): Promise<TaskSnapshot> {
  const snapshot = await view.read(message.taskId, context);
  if (!snapshot) throw new HarnessError('task_not_found', `Task not found: ${message.taskId}`);
  const { task } = snapshot;
  if (isTerminal(task.status?.state))
    throw new HarnessError('task_ended', `Task ${task.id} is in a terminal state and cannot be modified.`);
  if (message.contextId && message.contextId !== task.contextId)
    throw new HarnessError(
      'params_invalid',
      `contextId mismatch: message contextId '${message.contextId}' does not match task '${task.id}' contextId '${task.contextId}'`,
    );
  return snapshot;
}
