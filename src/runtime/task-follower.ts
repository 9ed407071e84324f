import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  ExecutionEventQueue,
  type AgentExecutionEvent,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { clientGoneSignal } from '../a2a/index.js';
import { HarnessError } from '../errors.js';
import { isTerminal } from '../wire.js';
import type { TaskEngine } from './engine.js';
import { seqOf } from '../event-seq.js';

export interface FollowTarget {
  taskStore: TaskStore;
  /** Whose buses carry a task's events, from this instance and the others. */
  engine: Pick<TaskEngine, 'buses' | 'isBusy' | 'runsHere'>;
}

export interface FollowOptions {
  /**
   * What follows the task as it stands:
   * - `live`: every event of the task until it waits for input or ends (`SubscribeToTask`). An
   *   idle task is given a bus, so that the subscriber sees a later command reply (CMD-8).
   * - `turn`: the events of the turn running now, if one is; nothing on an idle task.
   * - `none`: nothing.
   */
  follow: 'live' | 'turn' | 'none';
  /** Refuse a task that has ended, as `SubscribeToTask` must; otherwise it is sent as it stands. */
  refuseEnded: boolean;
  /** How much history the first event carries: the SDK's rule (unset: all; 0: none). */
  historyLength?: number;
}

/**
 * Streams a task to a client: the task as stored, then its events as they are published, here
 * or on another instance, as the SDK's `resubscribe` does. An event from another instance that
 * the task as read reflects already is skipped: each is sent once, and none is missed, as the
 * store writes a task and hands on its events in one transaction. Two more differences. The stream
 * ends at once when the client goes away (`a2a/client-gone.ts`), taking its listener off the bus;
 * and a bus left with no listener and no turn is released then, so idle tasks hold nothing for
 * clients long gone.
 */
export async function* followTask(
  target: FollowTarget,
  taskId: string,
  context: ServerCallContext,
  options: FollowOptions,
): AsyncGenerator<StreamResponse, void, undefined> {
  if (!taskId?.trim()) throw new HarnessError('params_invalid', 'Task ID is required');
  const buses = target.engine.buses;
  let bus = buses.getByTaskId(taskId, context);
  let unwatch: (() => void) | undefined;
  if (options.follow === 'live' || (options.follow === 'turn' && (await target.engine.isBusy(taskId)))) {
    // Following other instances begins before the task is read, so no event of theirs falls between.
    unwatch = await buses.watch(taskId);
    if (!bus) {
      const stored = await target.taskStore.load(taskId, context);
      if (stored && !isTerminal(stored.status?.state)) bus = buses.createOrGetByTaskId(taskId, context);
    }
  }
  // Listening starts before the task is read, so no event falls between the two.
  let queue = bus && options.follow !== 'none' ? new ExecutionEventQueue(bus) : undefined;
  const signal = clientGoneSignal(context);
  const stop = () => queue?.stop();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const task = await target.taskStore.load(taskId, context);
    if (!task) throw new HarnessError('task_not_found', `Task not found: ${taskId}`);
    if (options.refuseEnded && isTerminal(task.status?.state)) {
      throw new HarnessError('task_ended', `Task ${taskId} is in a terminal state and cannot be subscribed to.`);
    }
    // Events handed on from another instance that the task as read reflects already (`event-seq.ts`).
    const reflected = seqOf(task) ?? 0;
    yield { payload: { $case: 'task', value: withHistoryLength(task, options.historyLength) } };
    if (!queue || signal?.aborted) return;
    // A turn that ended before listening began has no event left to wait for.
    if (options.follow === 'turn' && !(await target.engine.isBusy(taskId))) return;
    for (;;) {
      let ended = false;
      for await (const event of queue.events()) {
        if ((seqOf(event) ?? Infinity) <= reflected) continue;
        ended = endsStream(event);
        if (event.kind === 'statusUpdate' && event.data.taskId === taskId)
          yield { payload: { $case: 'statusUpdate', value: event.data } };
        else if (event.kind === 'artifactUpdate' && event.data.taskId === taskId)
          yield { payload: { $case: 'artifactUpdate', value: event.data } };
        else if (event.kind === 'task' && event.data.id === taskId)
          yield { payload: { $case: 'task', value: event.data } };
      }
      if (ended || signal?.aborted || options.follow !== 'live') return;
      // The bus joined was a turn's, finished as this stream joined it: the turn's final status
      // went out before, and the task as read holds it. A live follower stays for what comes
      // next (CMD-8) on the task's bus now, a new one if the turn's is gone.
      bus = buses.createOrGetByTaskId(taskId, context);
      queue = new ExecutionEventQueue(bus);
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    queue?.stop();
    unwatch?.();
    if (bus) buses.releaseIfUnused(taskId, context, (id) => target.engine.runsHere(id));
  }
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
