import { randomUUID } from 'node:crypto';
import { Role, type Message, type Task, type TaskState, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { CommandResult } from './command.js';
import { COMMAND_KEY, COMMANDS_EXTENSION_URI, TASK_REF_KEY, dataPart, textPart } from './wire.js';

/** The metadata of a reply: exactly `{command}` or `{command, task_ref}` (CMD-4). */
export function replyMetadata(name: string, taskRef?: string): Record<string, string> {
  return taskRef ? { [COMMAND_KEY]: name, [TASK_REF_KEY]: taskRef } : { [COMMAND_KEY]: name };
}

/**
 * Builds the reply status update (CMD-4, CMD-5): the task's state, an agent message whose
 * first part is the text and whose optional second part is the data, the extension URI in
 * `extensions`, and the sub-task in `referenceTaskIds` when there is one.
 */
export function buildReply(
  task: Pick<Task, 'id' | 'contextId'>,
  state: TaskState,
  name: string,
  result: CommandResult,
): TaskStatusUpdateEvent {
  const message: Message = {
    messageId: randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: result.data ? [textPart(result.text), dataPart(result.data)] : [textPart(result.text)],
    metadata: replyMetadata(name, result.taskRef),
    extensions: [COMMANDS_EXTENSION_URI],
    referenceTaskIds: result.taskRef ? [result.taskRef] : [],
  };
  return {
    taskId: task.id,
    contextId: task.contextId,
    status: { state, message, timestamp: new Date().toISOString() },
    metadata: replyMetadata(name, result.taskRef),
  };
}

/** Whether a history message belongs to a command exchange (the command or its reply): such messages never reach the model (CMD-7). */
export function isCommandExchange(message: Message): boolean {
  return typeof message.metadata?.[COMMAND_KEY] === 'string';
}
