import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';
import { clientGoneSignal } from '../a2a/index.js';
import { HarnessError } from '../errors.js';
import { isInFlight, isTerminal, RESUMED_AFTER_KEY } from '../wire.js';
import { asStreamResponse } from './turn/turn-stream.js';
import type { LogSubscription, LoggedEvent, TaskSnapshot } from '../ports.js';

export interface FollowTarget {
  /** The task as the caller sees it, with its generation. */
  read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined>;
  /** The task's logged events after a generation, as far as the log holds them. */
  readLog(taskId: string, after: number): Promise<LoggedEvent[]>;
  feeds: { follow(taskId: string): Promise<LogSubscription> };
  /** Whether a turn holds the task, on any instance. */
  isBusy(taskId: string): Promise<boolean>;
}

export interface FollowOptions {
  /**
   * What follows the task as it stands:
   * - `live`: every event of the task until it waits for input or ends (`SubscribeToTask`),
   *   an idle task's later command replies included (CMD-8);
   * - `turn`: the events of the turn running now, if one is; nothing on an idle task;
   * - `none`: nothing.
   */
  follow: 'live' | 'turn' | 'none';
  /** Refuse a task that has ended, as `SubscribeToTask` must; otherwise it is sent as it stands. */
  refuseEnded: boolean;
  /** How much history the first event carries: the SDK's rule (unset: all; 0: none). */
  historyLength?: number;
  /**
   * The generation the client saw last (`Last-Event-ID`): after the Task, the events after it
   * are replayed from the log, and an ended task closes after them
   * (spec/stream-resume-extension-v1.md). One the log no longer holds, or beyond the task's, is
   * a plain follow.
   */
  resumeAfter?: number;
}

/**
 * Streams a task to a client: the task as stored, then its log after the task's generation, as
 * the SDK's `resubscribe` does, whichever instance writes it. Following begins before the task
 * is read, and the events the task as read holds already are skipped: each is sent once, and
 * none is missed. The stream ends at once when the client goes away (`clientGoneSignal`).
 */
export async function* followTask(
  target: FollowTarget,
  taskId: string,
  context: ServerCallContext,
  options: FollowOptions,
): AsyncGenerator<StreamResponse, void, undefined> {
  if (!taskId?.trim()) throw new HarnessError('params_invalid', 'Task ID is required');
  const follows = options.follow === 'live' || (options.follow === 'turn' && (await target.isBusy(taskId)));
  const subscription = follows ? await target.feeds.follow(taskId) : undefined;
  const signal = clientGoneSignal(context);
  const stop = () => subscription?.close();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const snapshot = await target.read(taskId, context);
    if (!snapshot) throw new HarnessError('task_not_found', `Task not found: ${taskId}`);
    const { task, generation } = snapshot;
    // A resume that cannot replay is a plain subscribe; a plain subscribe to an ended task is refused (A2A 1.0).
    const missed = await resumable(target, taskId, generation, options.resumeAfter);
    const ended = isTerminal(task.status?.state);
    if (ended && options.refuseEnded && options.resumeAfter === undefined) {
      throw new HarnessError('task_ended', `Task ${taskId} is in a terminal state and cannot be subscribed to.`);
    }
    // The Task first, as A2A 1.0 requires of every subscription (3.1.6), then the missed events.
    const first = withHistoryLength(task, options.historyLength);
    if (missed) first.metadata = { ...first.metadata, [RESUMED_AFTER_KEY]: options.resumeAfter };
    yield { payload: { $case: 'task', value: first } };
    if (missed) {
      for (const entry of missed) {
        const item = asStreamResponse(entry);
        if (item) yield item;
        // The stream broken off would have ended here (the task waits for input, or ended): so does this one.
        if (endsStream(entry.event)) return;
      }
    }
    if (ended && options.resumeAfter !== undefined) return;
    if (!subscription || signal?.aborted) return;
    // A turn that ended before following began has no event left to wait for.
    if (options.follow === 'turn' && !(await target.isBusy(taskId)) && !isInFlight(task.status?.state)) return;
    for (;;) {
      const entry = await subscription.next();
      if (!entry) return;
      if (entry.generation <= generation) continue;
      const item = asStreamResponse(entry);
      if (item) yield item;
      if (endsStream(entry.event)) return;
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    subscription?.close();
  }
}

/**
 * The events after `after` up to `generation` (the task as read), when the log holds every one
 * of them; undefined when it does not (pruned, or an `after` beyond the task's), or none was asked.
 */
async function resumable(
  target: FollowTarget,
  taskId: string,
  generation: number,
  after: number | undefined,
): Promise<LoggedEvent[] | undefined> {
  if (after === undefined || !Number.isSafeInteger(after) || after < 0 || after > generation) return undefined;
  if (after === generation) return [];
  const read = (await target.readLog(taskId, after)).filter((entry) => entry.generation <= generation);
  return read[0]?.generation === after + 1 && read.at(-1)?.generation === generation ? read : undefined;
}

/** Whether a stream ends after this event, as the SDK's queue ends: a message, or a status that waits for input or ends the task. */
function endsStream(event: AgentExecutionEvent): boolean {
  if (event.kind === 'message') return true;
  const state = event.kind === 'statusUpdate' ? event.data.status?.state : undefined;
  return state === TaskState.TASK_STATE_INPUT_REQUIRED || isTerminal(state);
}

/** The SDK's `historyLength` rule: unset keeps all, 0 or less keeps none, n keeps the last n. */
function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined) return task;
  return { ...task, history: historyLength <= 0 ? [] : task.history.slice(-historyLength) };
}
