import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type TaskArtifactUpdateEvent, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { MODEL_KEY, NOTICE_KEY, textPart } from '../wire.js';

/** An agent message holding one text part: the harness's own words when `notice` says which kind, else a model's reply (`model` says whose). */
export function agentMessage(
  taskId: string,
  contextId: string,
  text: string,
  notice?: string,
  model?: string,
): Message {
  return {
    messageId: randomUUID(),
    taskId,
    contextId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: { ...(notice ? { [NOTICE_KEY]: notice } : {}), ...(model ? { [MODEL_KEY]: model } : {}) },
    extensions: [],
    referenceTaskIds: [],
  };
}

export function statusUpdate(
  taskId: string,
  contextId: string,
  state: TaskState,
  message?: Message,
): TaskStatusUpdateEvent {
  return { taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: {} };
}

/** The artifact a streamed reply is written into, one chunk at a time. */
export interface ReplyArtifact {
  taskId: string;
  contextId: string;
  artifactId: string;
  modelId: string;
}

/**
 * One chunk of a streamed reply: its text as the one part of the reply artifact. The part is
 * there even when the text is empty (the chunk that only closes the artifact): an A2A 1.0
 * Artifact "must contain at least one part" (a2a.proto, Artifact.parts), and a client that
 * reads `artifact.parts` must find one.
 */
export function replyChunk(
  artifact: ReplyArtifact,
  text: string,
  flags: { append: boolean; lastChunk: boolean },
): TaskArtifactUpdateEvent {
  return {
    taskId: artifact.taskId,
    contextId: artifact.contextId,
    artifact: {
      artifactId: artifact.artifactId,
      name: 'response',
      description: `Reply of ${artifact.modelId}`,
      parts: [textPart(text)],
      metadata: {},
      extensions: [],
    },
    append: flags.append,
    lastChunk: flags.lastChunk,
    metadata: {},
  };
}
