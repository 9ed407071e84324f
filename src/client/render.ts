/**
 * Turning what an agent sends back (a blocking result or a stream of events) into what a
 * person reads: model output as it arrives, command replies apart from it, and how the turn
 * ended. `TurnReader` keeps the bookkeeping (ids, state, what was already shown); the chat and
 * `send` decide how each piece looks.
 */
import { elicitationOf, type ElicitationData } from '../elicitations.js';
import { TaskState, type Artifact, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { markLineOf } from './conversation-marks.js';
import {
  AWAITING_APPROVAL_NOTICE,
  COMMAND_KEY,
  NOTICE_KEY,
  SUBTASK_NOTE_KEY,
  TASK_REF_KEY,
  TOOL_CALL_KEY,
  TOOL_OUTPUT_ARTIFACT_NAME,
  TURN_PROGRESS_NOTICES,
  isTerminal,
  textOf as partsText,
  toolCallsOf,
  subtaskNoteOf,
  type SubtaskNote,
  type ToolCallData,
} from '../wire.js';
import { dataOf } from '../conversation-replies.js';

/** One thing to show. */
export type Shown =
  /** A chunk of model output, as it arrived. */
  | { kind: 'text'; text: string }
  /** A command's reply; `taskRef` when it started a sub-task. */
  | {
      kind: 'command';
      name: string;
      text: string;
      taskRef?: string;
      messageId?: string;
      data?: Record<string, unknown>;
    }
  /** A compaction point or a rewind mark, as the divider line it is drawn as (conversation-marks.ts). */
  | { kind: 'mark'; text: string }
  /** A note that a sub-task started (a sub-agent's) or ended, and which. */
  | { kind: 'note'; text: string; subtask?: SubtaskNote }
  /** The harness's words while the turn goes on (`TURN_PROGRESS_NOTICES`: a retry, tools missing). */
  | { kind: 'notice'; text: string }
  /** A tool call's status changed (the tool-calls extension). */
  | { kind: 'tool'; call: ToolCallData }
  /** The end of the turn: its state, its reply when none was streamed, and the harness's notice kind when it wrote the text. */
  | { kind: 'end'; state: TaskState; text: string; notice?: string };

export function textOf(message: Message | undefined): string {
  return partsText(message?.parts);
}

export function artifactsText(artifacts: readonly Artifact[] | undefined): string {
  return (artifacts ?? []).map((a) => partsText(a.parts)).join('\n');
}

/** A task's result for a person: its status message, else its artifacts' text. */
export function resultText(task: Task): string {
  return textOf(task.status?.message) || artifactsText(task.artifacts);
}

const STATE_NAMES: Partial<Record<TaskState, string>> = {
  [TaskState.TASK_STATE_SUBMITTED]: 'submitted',
  [TaskState.TASK_STATE_WORKING]: 'working',
  [TaskState.TASK_STATE_COMPLETED]: 'completed',
  [TaskState.TASK_STATE_FAILED]: 'failed',
  [TaskState.TASK_STATE_CANCELED]: 'canceled',
  [TaskState.TASK_STATE_INPUT_REQUIRED]: 'input-required',
  [TaskState.TASK_STATE_REJECTED]: 'rejected',
  [TaskState.TASK_STATE_AUTH_REQUIRED]: 'auth-required',
};

export function stateName(state: TaskState | undefined): string {
  return (state !== undefined && STATE_NAMES[state]) || 'unknown';
}

/** A turn is over when the task waits for the user or can take no more messages. */
export function endsTurn(state: TaskState | undefined): boolean {
  return (
    state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED || isTerminal(state)
  );
}

/** Whether `send` should report failure for a task that ended in this state. */
export function isFailure(state: TaskState | undefined): boolean {
  return state === TaskState.TASK_STATE_FAILED || state === TaskState.TASK_STATE_REJECTED;
}

function commandOf(
  message: Message | undefined,
  metadata?: Record<string, unknown>,
): { name: string; taskRef?: string } | undefined {
  const meta = (metadata && typeof metadata[COMMAND_KEY] === 'string' ? metadata : message?.metadata) ?? {};
  const name = meta[COMMAND_KEY];
  if (typeof name !== 'string') return undefined;
  const ref = meta[TASK_REF_KEY];
  return { name, taskRef: typeof ref === 'string' && ref !== '' ? ref : undefined };
}

function noticeOf(message: Message | undefined): string | undefined {
  const notice = message?.metadata?.[NOTICE_KEY];
  return typeof notice === 'string' ? notice : undefined;
}

/** The calls a turn's last message says wait for approval, when it ended waiting. */
function waitingCallsOf(message: Message | undefined, notice: string | undefined): ToolCallData[] {
  if (notice !== AWAITING_APPROVAL_NOTICE) return [];
  return toolCallsOf(message?.parts).filter((call) => call.status === 'awaiting-approval');
}

/** Reads one turn's events (or a blocking result) in order. */
export class TurnReader {
  taskId = '';
  contextId = '';
  state: TaskState | undefined;
  /** Whether any model output was streamed (then the final status repeats it and is not shown). */
  streamed = false;
  /** The model output streamed, as shown. */
  private streamedText = '';
  /** The harness's notice kind on the message that ended the turn (`model-failure`, ...), if any. */
  endNotice: string | undefined;
  /** The tool calls the turn ended waiting for approval on (CMD-33), in the order the model asked for them. */
  waiting: ToolCallData[] = [];
  /** The question a tool call's server asks, when the turn paused on one (issue 39). */
  question: ElicitationData | undefined;
  private ended = false;
  private lastTask: Task | undefined;
  private lastMessage: Message | undefined;
  private readonly seen = new Set<string>();

  /** What this event adds to the screen. */
  read(event: StreamResponse): Shown[] {
    const payload = event.payload;
    if (payload?.$case !== 'task') this.lastTask = undefined; // the task is only the result when nothing follows it
    switch (payload?.$case) {
      case 'task':
        return this.readTask(payload.value);
      case 'message': {
        const message = payload.value;
        if (message.taskId) this.taskId = message.taskId;
        if (message.contextId) this.contextId = message.contextId;
        this.lastMessage = message;
        return [];
      }
      case 'artifactUpdate': {
        if (payload.value.taskId) this.taskId = payload.value.taskId;
        // A call's whole output: its report says where it is; it is not the reply.
        if (payload.value.artifact?.name === TOOL_OUTPUT_ARTIFACT_NAME) return [];
        const text = partsText(payload.value.artifact?.parts);
        if (!text) return [];
        this.streamed = true;
        this.streamedText += text;
        return [{ kind: 'text', text }];
      }
      case 'statusUpdate': {
        const update = payload.value;
        if (update.taskId) this.taskId = update.taskId;
        if (update.contextId) this.contextId = update.contextId;
        const message = update.status?.message;
        const command = commandOf(message, update.metadata);
        if (command) return this.commandReply(message, command);
        const mark = message && markLineOf(message);
        if (mark) return this.once(message, [{ kind: 'mark', text: mark }]);
        if (message?.metadata?.[SUBTASK_NOTE_KEY] !== undefined) {
          const subtask = subtaskNoteOf(message.metadata);
          return this.once(message, [{ kind: 'note', text: textOf(message), ...(subtask ? { subtask } : {}) }]);
        }
        if (message?.metadata?.[TOOL_CALL_KEY] !== undefined)
          return this.once(
            message,
            toolCallsOf(message.parts).map((call) => ({ kind: 'tool' as const, call })),
          );
        if (TURN_PROGRESS_NOTICES.has(noticeOf(message) ?? ''))
          return this.once(message, [{ kind: 'notice', text: textOf(message) }]);
        this.state = update.status?.state ?? this.state;
        if (!endsTurn(this.state)) return [];
        this.ended = true;
        this.endNotice = noticeOf(message);
        this.waiting = waitingCallsOf(message, this.endNotice);
        this.question = elicitationOf(message);
        // The harness's own words (calls waiting for approval, a failure explained) are never what streamed.
        const notice = message?.metadata?.[NOTICE_KEY] !== undefined;
        const end: Shown = {
          kind: 'end',
          state: this.state!,
          text: notice ? textOf(message) : this.notStreamed(textOf(message)),
        };
        return [this.endNotice === undefined ? end : { ...end, notice: this.endNotice }];
      }
      default:
        return [];
    }
  }

  /** A message shown before this reading began (a stream's opening task's earlier reply): not shown again. */
  shownBefore(message: Message | undefined): void {
    if (message?.messageId) this.seen.add(message.messageId);
  }

  /** The reply streamed before the reading began (a running turn followed): shown, and the rest adds to it. */
  replySoFar(text: string): Shown[] {
    this.streamed = true;
    this.streamedText += text;
    return [{ kind: 'text', text }];
  }

  /** What is left to show once the stream (or the blocking call) is over. */
  finish(): Shown[] {
    if (this.ended) return [];
    if (this.lastMessage) {
      this.ended = true;
      return [{ kind: 'end', state: TaskState.TASK_STATE_COMPLETED, text: textOf(this.lastMessage) }];
    }
    const task = this.lastTask;
    // Only a task that came last (a blocking result, or an agent that does not stream) holds the reply.
    if (!task || !endsTurn(this.state)) return [];
    this.ended = true;
    this.endNotice = noticeOf(task.status?.message);
    this.waiting = waitingCallsOf(task.status?.message, this.endNotice);
    this.question = elicitationOf(task.status?.message);
    if (commandOf(task.status?.message)) return []; // a command's reply, shown already
    if (task.status?.message && this.seen.has(task.status.message.messageId)) return [];
    return [{ kind: 'end', state: this.state!, text: this.notStreamed(resultText(task)) }];
  }

  /**
   * What the turn's whole reply adds to what streamed: all of it when nothing streamed, nothing
   * when it repeats it, and the rest when it goes on from it (a stopped reply's mark, CMD-32).
   */
  private notStreamed(reply: string): string {
    if (!this.streamed) return reply;
    const streamed = this.streamedText.trimEnd();
    return reply.startsWith(streamed) ? reply.slice(streamed.length).trim() : '';
  }

  private readTask(task: Task): Shown[] {
    this.taskId = task.id;
    this.contextId = task.contextId;
    this.state = task.status?.state ?? this.state;
    this.lastTask = task;
    const message = task.status?.message;
    const command = commandOf(message);
    return command ? this.commandReply(message, command) : [];
  }

  private commandReply(message: Message | undefined, command: { name: string; taskRef?: string }): Shown[] {
    const taskRef = command.taskRef ?? message?.referenceTaskIds?.[0];
    const data = dataOf(message?.parts);
    return this.once(message, [
      {
        kind: 'command',
        name: command.name,
        text: textOf(message),
        taskRef,
        messageId: message?.messageId,
        ...(data ? { data } : {}),
      },
    ]);
  }

  /** Shows a message once, however many events carry it. */
  private once(message: Message | undefined, shown: Shown[]): Shown[] {
    const id = message?.messageId;
    if (id) {
      if (this.seen.has(id)) return [];
      this.seen.add(id);
    }
    return shown;
  }
}

/** A tool call on one line for a person: the tool, its input and output shortened, and its status. */
export function toolCallLine(call: ToolCallData, width = 80): string {
  const short = (text: string, max: number) => {
    const line = text.replace(/\s+/g, ' ').trim();
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  };
  const input = short(JSON.stringify(call.input ?? {}), Math.max(20, Math.floor(width / 2)));
  const status = call.status.replace('-', ' ');
  const output = call.output ? ` · ${short(call.output, width)}` : '';
  const whole = call.outputArtifactId ? ` (all of it in artifact ${call.outputArtifactId})` : '';
  return `${call.tool} ${input} · ${status}${output}${whole}`;
}

export { styleFor, type Style } from './style.js';
