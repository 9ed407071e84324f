import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { NOTICE_KEY } from './history.js';
import { textPart } from '../wire.js';

/** An agent message holding one text part; `notice` marks text the harness wrote, not a model. */
export function agentMessage(taskId: string, contextId: string, text: string, notice?: string): Message {
  return {
    messageId: randomUUID(),
    taskId,
    contextId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: notice ? { [NOTICE_KEY]: notice } : {},
    extensions: [],
    referenceTaskIds: [],
  };
}

export function statusUpdate(taskId: string, contextId: string, state: TaskState, message?: Message): TaskStatusUpdateEvent {
  return { taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: {} };
}
