/**
 * Resuming a broken stream (spec/stream-resume-extension-v1.md), for the command-line clients
 * and the web page alike: the generation each event carries, and a stream of a turn's events
 * that reconnects with `SubscribeToTask` and `Last-Event-ID` when it breaks before the turn
 * ends, so that nothing is lost or shown twice. Like src/wire.ts, it depends on the SDK's types
 * only (the web page bundles it), never on Node.
 */
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  COMMAND_KEY,
  GENERATION_KEY,
  isTerminal,
  MODEL_KEY,
  NOTICE_KEY,
  RESUMED_AFTER_KEY,
  textOf,
  textPart,
  TOOL_OUTPUT_ARTIFACT_NAME,
} from './wire.js';

/** The header (on gRPC, the metadata key `last-event-id`) a resuming `SubscribeToTask` names the last generation seen in. */
export const LAST_EVENT_ID_HEADER = 'Last-Event-ID';

/** The generation a Task, status update or artifact update carries; undefined on other events or none. */
export function generationOf(event: StreamResponse): number | undefined {
  const p = event.payload;
  const value = p?.$case === 'message' || !p ? undefined : p.value.metadata?.[GENERATION_KEY];
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

/**
 * The reply of the turn running on a task read back (the page uses it, and so does the chat):
 * the artifact this page saw streaming (`replyArtifact`, kept across the reload), else the
 * newest reply artifact when the task has more reply artifacts than its history has
 * turn-ending agent messages (each finished turn has one of each; the running turn has its
 * artifact only). `task` holds its whole history.
 */
export function runningReply(task: Task, replyArtifact?: string): { artifactId: string; text: string } | undefined {
  const replies = task.artifacts.filter((a) => a.name !== TOOL_OUTPUT_ARTIFACT_NAME);
  const known = replyArtifact ? replies.find((a) => a.artifactId === replyArtifact) : undefined;
  const ended = task.history.filter(endsTurn).length;
  const artifact = known ?? (!replyArtifact && replies.length > ended ? replies.at(-1) : undefined);
  return artifact ? { artifactId: artifact.artifactId, text: textOf(artifact.parts) } : undefined;
}

/** The message that ended the turn of message `messageId` in a task read back, if that turn has ended. */
export function turnReplyTo(task: Task, messageId: string): Message | undefined {
  const sent = task.history.findIndex((m) => m.messageId === messageId);
  return sent < 0 ? undefined : task.history.slice(sent + 1).find(endsTurn);
}

/** Whether an agent message is a turn's end: the model's reply, or the harness's notice in its place. */
function endsTurn(m: Message): boolean {
  return (
    m.role === Role.ROLE_AGENT && (m.metadata?.[MODEL_KEY] !== undefined || m.metadata?.[NOTICE_KEY] !== undefined)
  );
}

export interface ResumeOptions {
  signal?: AbortSignal;
  /** The task and the last generation already shown (a page that read the task with GetTask). */
  taskId?: string;
  after?: number;
  /** The text already shown of each artifact, by id: a resume that starts with the Task shows only the rest. */
  shown?: Map<string, string>;
  /** Whether a failure may be retried (default: any); a refusal by the agent is not. */
  retryable?: (error: unknown) => boolean;
  /**
   * The message sent is a command: its stream is whole once the command's reply came (a status
   * update with the command's metadata), whatever the task's state (WORKING during a turn, which
   * the reply does not end). What the command started and its stream goes on with (a turn
   * resumed by `/approve`) is followed as a turn's stream from there.
   */
  command?: boolean;
  /** Told once when the stream broke and reconnecting starts, and once the first event came again. */
  onDropped?: (error: unknown) => void;
  onResumed?: () => void;
}

/** A turn is over when the task waits for the user or can take no more messages. */
function endsTurnState(state: TaskState | undefined): boolean {
  return (
    state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED || isTerminal(state)
  );
}

/** A status update's metadata names a command: the update is that command's reply (CMD-4). */
function isCommandReply(metadata: Record<string, unknown> | undefined): boolean {
  return typeof metadata?.[COMMAND_KEY] === 'string';
}

/** What a Task holds of each artifact beyond the text already shown, as appended chunks (the rest of the reply). */
function* restOfArtifacts(task: Task, shown: Map<string, string>): Generator<StreamResponse> {
  for (const artifact of task.artifacts) {
    const text = textOf(artifact.parts);
    const before = shown.get(artifact.artifactId);
    if (before === undefined || !text.startsWith(before) || text === before) continue;
    shown.set(artifact.artifactId, text);
    const rest = { ...artifact, parts: [textPart(text.slice(before.length))] };
    const update = {
      taskId: task.id,
      contextId: task.contextId,
      artifact: rest,
      append: true,
      lastChunk: false,
      metadata: {},
    };
    yield { payload: { $case: 'artifactUpdate', value: update } };
  }
}

/** The waits before each reconnection attempt: about a minute in all, then the stream fails. */
const RESUME_DELAYS_MS = [200, 500, 1000, 2000, 3000, 5000, 5000, 5000, 10_000, 10_000, 10_000];

/**
 * A turn's events, resumed when the stream breaks before the turn ends (spec/stream-resume-extension-v1.md):
 * `resume(taskId, after)` subscribes with `Last-Event-ID: after`, with backoff; events at or below a
 * generation seen are dropped, so nothing shows twice. The Task a resumed stream starts with is
 * skipped when a replay follows it (`RESUMED_AFTER_KEY`); otherwise (the log no longer holds what
 * was missed) the rest of each artifact it holds is yielded first, as an appended chunk.
 */
export async function* resumableStream(
  first: AsyncIterable<StreamResponse>,
  resume: (taskId: string, after: number, signal?: AbortSignal) => AsyncIterable<StreamResponse>,
  options: ResumeOptions = {},
): AsyncGenerator<StreamResponse, void, undefined> {
  let { taskId, after: last } = options;
  const shown = options.shown ?? new Map<string, string>();
  let stream = first;
  let resumed = false;
  let attempt = 0;
  let turnRan = false; // a status update or an artifact came: the stream follows a turn
  let answered = false; // the command's reply came (`command`)
  for (;;) {
    let failure: unknown;
    let ended = false;
    let opening = resumed;
    try {
      for await (const event of stream) {
        // The Task a replay follows (`RESUMED_AFTER_KEY`): the replayed events say what it holds.
        if (
          opening &&
          event.payload?.$case === 'task' &&
          event.payload.value.metadata?.[RESUMED_AFTER_KEY] !== undefined
        ) {
          opening = false;
          continue;
        }
        const g = generationOf(event);
        if (g !== undefined && last !== undefined && g <= last) continue;
        if (g !== undefined) last = g;
        if (attempt > 0) options.onResumed?.();
        attempt = 0;
        const p = event.payload;
        if (p?.$case === 'task' && opening) yield* restOfArtifacts(p.value, shown);
        opening = false;
        if (p?.$case === 'artifactUpdate' && p.value.artifact) {
          const { artifactId, parts } = p.value.artifact;
          shown.set(artifactId, (p.value.append ? (shown.get(artifactId) ?? '') : '') + textOf(parts));
        }
        if (p?.$case === 'task') taskId = p.value.id;
        else if (p?.$case === 'statusUpdate' || p?.$case === 'artifactUpdate') taskId = p.value.taskId || taskId;
        if (p?.$case === 'statusUpdate' || p?.$case === 'artifactUpdate') turnRan = true;
        const state = p?.$case === 'task' || p?.$case === 'statusUpdate' ? p.value.status?.state : undefined;
        if (options.command && !answered && p?.$case === 'statusUpdate' && isCommandReply(p.value.metadata)) {
          answered = ended = true;
        } else if (answered && p?.$case !== 'message') {
          // What the command started: a turn, followed until it ends.
          ended = endsTurnState(state);
        } else {
          ended ||= p?.$case === 'message' || endsTurnState(state);
        }
        yield event;
      }
    } catch (error) {
      if (options.signal?.aborted || !(options.retryable?.(error) ?? true)) throw error;
      failure = error;
    }
    if (ended || (failure === undefined && !turnRan && !resumed)) return;
    if (!taskId || last === undefined || attempt >= RESUME_DELAYS_MS.length) {
      if (failure !== undefined) throw failure;
      return;
    }
    if (attempt === 0) options.onDropped?.(failure);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, RESUME_DELAYS_MS[attempt++]);
      options.signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    if (options.signal?.aborted) throw failure ?? new Error('stopped');
    stream = resume(taskId, last, options.signal);
    resumed = true;
  }
}
