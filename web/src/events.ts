/**
 * Reading stream events into the few things the page shows: a reply streaming, a command's
 * reply with its sub-task, a note about a sub-task, a tool call, a state. No DOM here.
 */
import { Role, TaskState, taskStateFromJSON, type Message, type StreamResponse } from '@a2a-js/sdk';
import {
  AWAITING_APPROVAL_NOTICE,
  COMMAND_KEY,
  fromCommandOf,
  MODEL_KEY,
  NOTICE_KEY,
  QUEUED_KEY,
  SUBTASK_NOTE_KEY,
  TASK_REF_KEY,
  TOOL_CALL_KEY,
  subtaskNoteOf,
  TOOL_OUTPUT_ARTIFACT_NAME,
  textOf,
  toolCallsOf,
  TURN_FAILURE_NOTICES,
  TURN_PROGRESS_NOTICES,
  compactionOf,
  rewindOf,
  type CompactionPoint,
  type ToolCallData,
} from '../../src/wire.js';
import { dataOf } from '../../src/conversation-replies.js';
import {
  ELICITATION_ANSWER_NOTICE,
  ELICITATION_ENDED_NOTICE,
  elicitationOf,
  type ElicitationData,
} from '../../src/elicitations.js';

/** What one stream event means for the page. */
export type ChatEvent =
  /** The task the message went to (created or continued); its status message is old news. */
  | { kind: 'task'; taskId: string; contextId: string; state: TaskState }
  /** A piece of the model's reply as it streams. */
  | { kind: 'chunk'; artifactId: string; text: string; append: boolean }
  /** The task's state changed (or was re-announced). */
  | { kind: 'state'; taskId: string; contextId: string; state: TaskState }
  /** An agent message: the whole reply at the end of a turn (with the model that wrote it), or a failure explained. */
  | { kind: 'reply'; messageId: string; text: string; model?: string }
  /** A command's reply (`metadata.command`), with the sub-task it started (`metadata.task_ref`); `/model`'s says the task's model. */
  | {
      kind: 'command';
      messageId: string;
      command: string;
      text: string;
      taskRef?: string;
      model?: string;
      data?: Record<string, unknown>;
    }
  /** A compaction point (the conversation extension): the summary that replaced the conversation before it. */
  | { kind: 'compaction'; messageId: string; text: string; point: CompactionPoint }
  /** A rewind mark: `hidden` messages before it were taken back. */
  | { kind: 'rewind'; messageId: string; hidden: number }
  /**
   * The harness's note that a sub-task ended (`subtaskEnded`), or waits for approval of its tool
   * calls, or (a sub-agent the model delegated to, named by `agent`) started.
   */
  | { kind: 'note'; messageId: string; text: string; subtaskId?: string; subtaskEnded?: boolean; agent?: string }
  /** A tool call's status changed (the tool-calls extension): one row per call, updated in place. */
  | { kind: 'tool'; call: ToolCallData }
  /** A message the user sent, as a task read back shows it. */
  /** `fromCommand`: a prompt a command file or skill put in the turn (CMD-38), e.g. `/review`. */
  | { kind: 'user'; messageId: string; text: string; fromCommand?: string }
  /** The harness's own words, apart from the model's reply (calls waiting for approval, a failure explained, a turn resumed). */
  | { kind: 'notice'; messageId: string; text: string; error?: boolean }
  /** A tool call's server asks the user (issue 39): drawn as a form, or a link with Done. */
  | { kind: 'question'; messageId: string; question: ElicitationData }
  /** The message waits in the task's queue on the agent, `position` 1 being next (the while-busy extension). */
  | { kind: 'queued'; messageId: string; position: number }
  /** A queued message's own turn has started: what follows is its turn's (said by `Conversation.send`). */
  | { kind: 'started'; messageId: string };

/** The states of a sub-task that has not ended. */
const GOING_ON = new Set<TaskState>([
  TaskState.TASK_STATE_SUBMITTED,
  TaskState.TASK_STATE_WORKING,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

function stringAt(metadata: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = metadata?.[key];
  return typeof value === 'string' && value ? value : undefined;
}

/** Reads one stream event. */
export function interpret(event: StreamResponse): ChatEvent[] {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task': {
      const task = payload.value;
      const events: ChatEvent[] = [
        {
          kind: 'task',
          taskId: task.id,
          contextId: task.contextId,
          state: task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED,
        },
      ];
      const queued = task.metadata?.[QUEUED_KEY] as { messageId?: unknown; position?: unknown } | undefined;
      if (queued && typeof queued.messageId === 'string' && typeof queued.position === 'number')
        events.push({ kind: 'queued', messageId: queued.messageId, position: queued.position });
      return events;
    }
    case 'artifactUpdate': {
      const { artifact, append } = payload.value;
      // A call's whole output: its row says where it is; it is not the reply.
      if (artifact?.name === TOOL_OUTPUT_ARTIFACT_NAME) return [];
      const text = textOf(artifact?.parts);
      return artifact && text ? [{ kind: 'chunk', artifactId: artifact.artifactId, text, append }] : [];
    }
    case 'message':
      return [{ kind: 'reply', messageId: payload.value.messageId, text: textOf(payload.value.parts) }];
    case 'statusUpdate': {
      const update = payload.value;
      const state = update.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
      const events: ChatEvent[] = [{ kind: 'state', taskId: update.taskId, contextId: update.contextId, state }];
      const message = update.status?.message;
      if (message) events.push(...readStatusMessage(message, update.metadata));
      return events;
    }
    default:
      return [];
  }
}

/**
 * Reads a message of a task's history: the user's own, or one the harness wrote in the user's
 * place and marked as its notice (`NOTICE_KEY`: the message that resumes a turn once its tool
 * calls are answered), or an agent message.
 */
export function readHistoryMessage(message: Message): ChatEvent[] {
  if (message.role !== Role.ROLE_USER) return readStatusMessage(message, undefined);
  const text = textOf(message.parts);
  if (message.metadata?.[NOTICE_KEY] !== undefined) return [{ kind: 'notice', messageId: message.messageId, text }];
  const from = fromCommandOf(message);
  return [{ kind: 'user', messageId: message.messageId, text, ...(from && { fromCommand: from.command }) }];
}

/** Reads an agent message (a status update's, or one of a task's history) and its update's metadata. */
export function readStatusMessage(message: Message, updateMetadata: Record<string, unknown> | undefined): ChatEvent[] {
  const metadata = { ...message.metadata, ...updateMetadata };
  const text = textOf(message.parts);
  const command = stringAt(metadata, COMMAND_KEY);
  if (command) {
    const taskRef = stringAt(metadata, TASK_REF_KEY) ?? message.referenceTaskIds?.[0];
    const model = command === 'model' ? currentModelOf(message) : undefined;
    const data = dataOf(message.parts);
    return [
      {
        kind: 'command',
        messageId: message.messageId,
        command,
        text,
        ...(taskRef ? { taskRef } : {}),
        ...(model ? { model } : {}),
        ...(data ? { data } : {}),
      },
    ];
  }
  const point = compactionOf(message);
  if (point) return [{ kind: 'compaction', messageId: message.messageId, text, point }];
  const mark = rewindOf(message);
  if (mark) return [{ kind: 'rewind', messageId: message.messageId, hidden: mark.hidden.length }];
  if (metadata[SUBTASK_NOTE_KEY] !== undefined) {
    const note = subtaskNoteOf(metadata);
    if (!note) return [{ kind: 'note', messageId: message.messageId, text }];
    // Ended unless it says the sub-task goes on (waits for approval): a note never leaves one followed forever.
    const subtaskEnded = !GOING_ON.has(taskStateFromJSON(note.state));
    const agent = note.agent ? { agent: note.agent } : {};
    return [{ kind: 'note', messageId: message.messageId, text, subtaskId: note.id, subtaskEnded, ...agent }];
  }
  if (metadata[TOOL_CALL_KEY] !== undefined) return toolCallsOf(message.parts).map((call) => ({ kind: 'tool', call }));
  const notice = metadata[NOTICE_KEY];
  if (typeof notice === 'string' && TURN_FAILURE_NOTICES.has(notice))
    return [{ kind: 'notice', messageId: message.messageId, text, error: true }];
  if (typeof notice === 'string' && TURN_PROGRESS_NOTICES.has(notice))
    return [{ kind: 'notice', messageId: message.messageId, text }];
  const question = elicitationOf(message);
  if (question) return [{ kind: 'question', messageId: message.messageId, question }];
  if (notice === ELICITATION_ANSWER_NOTICE || notice === ELICITATION_ENDED_NOTICE)
    return [{ kind: 'notice', messageId: message.messageId, text }];
  if (notice === AWAITING_APPROVAL_NOTICE) {
    return [
      { kind: 'notice', messageId: message.messageId, text },
      ...toolCallsOf(message.parts).map((call): ChatEvent => ({ kind: 'tool', call })),
    ];
  }
  const model = stringAt(metadata, MODEL_KEY);
  return [{ kind: 'reply', messageId: message.messageId, text, ...(model ? { model } : {}) }];
}

/** The task's model after a `/model` reply: its data part's `current`. */
function currentModelOf(message: Message): string | undefined {
  for (const part of message.parts) {
    const current =
      part.content?.$case === 'data' ? (part.content.value as Record<string, unknown>)['current'] : undefined;
    if (typeof current === 'string' && current) return current;
  }
  return undefined;
}
