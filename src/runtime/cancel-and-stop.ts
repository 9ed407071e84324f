import { ExecutionEventQueue, type ServerCallContext } from '@a2a-js/sdk/server';
import { TaskState, type Message, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { HarnessError } from '../errors.js';
import { isTerminal } from '../wire.js';
import type { Coordination, TurnEnding } from './coordination.js';
import type { EngineTaskStore } from './engine.js';
import { agentMessage, statusUpdate } from './events.js';
import type { TaskBuses } from './task-buses.js';
import type { DecideStatus } from './task-writes.js';
import { waitingCalls } from './tool-approvals.js';
import { closingParts } from './tool-calls.js';
import { TurnCanceled, TurnStopped } from './turns.js';

/** How often a cancel request for a turn on another instance is repeated until the turn ends. */
const CANCEL_AGAIN_MS = 2000;

/** What cancel and stop need of the engine: its turns here, its writes, its buses. */
export interface CancelTarget {
  readonly coordination: Coordination;
  readonly buses: TaskBuses;
  readonly store: Pick<EngineTaskStore, 'load'>;
  runsHere(taskId: string): boolean;
  isBusy(taskId: string): Promise<boolean>;
  abortTurn(taskId: string, reason: TurnCanceled | TurnStopped): void;
  /** Resolves once the turn reserved or running here on the task has ended (or was given back). */
  turnDone(taskId: string): Promise<unknown>;
  settle(taskId: string, context: ServerCallContext, decide: DecideStatus): Promise<TaskStatusUpdateEvent | undefined>;
  onError(error: unknown, what: string, taskId?: string): void;
}

/**
 * `CancelTask` and `/stop` (CMD-31, CMD-32), wherever the task's turn runs. The turn is aborted
 * by the instance running it (`abortTurn` there, asked through `Coordination.requestCancel`);
 * a canceled turn's CANCELED status is stored by that instance's engine when the turn ends
 * (`TaskEngine.end`); an idle task's by this one, under the task's write lock. Either way it is
 * one status update, delivered to every stream open on the task, here and elsewhere.
 */
export class CancelAndStop {
  constructor(private readonly engine: CancelTarget) {}

  /**
   * Cancels the task for the caller, who must see it: not found otherwise, not cancelable once
   * it has ended, CANCELED included (A2A 1.0.1, 3.3.2). Resolves once it is stored CANCELED; a
   * task found CANCELED after this call aborted its turn was canceled by it, or by a cancel
   * under way at once, and is done.
   */
  async cancel(taskId: string, context: ServerCallContext): Promise<void> {
    const { engine } = this;
    for (let aborted = false; ; aborted = true) {
      const task = await engine.store.load(taskId, context);
      if (!task) throw new HarnessError('task_not_found', `Task not found: ${taskId}`);
      if (endedAlready(task, aborted)) return;
      if (engine.runsHere(taskId)) {
        const done = engine.turnDone(taskId);
        engine.abortTurn(taskId, new TurnCanceled());
        await done;
      } else if (await engine.coordination.turnHeld(taskId)) {
        await this.cancelElsewhere(taskId, context);
      }
      let turnBegan = false;
      await engine.settle(taskId, context, async (stored) => {
        if (endedAlready(stored, true)) return undefined;
        // A turn began after the one canceled ended: it is canceled in its turn.
        if ((turnBegan = await engine.isBusy(taskId))) return undefined;
        return canceledIdle(stored);
      });
      if (!turnBegan) return;
    }
  }

  /**
   * Stops the task's turn, wherever it runs (CMD-32): it ends as a finished turn ends, keeping
   * what it wrote. A request, not a wait: the turn's final status follows on its own.
   */
  async stop(taskId: string): Promise<void> {
    if (this.engine.runsHere(taskId)) return this.engine.abortTurn(taskId, new TurnStopped());
    if (await this.engine.coordination.turnHeld(taskId)) await this.engine.coordination.requestCancel(taskId, 'stop');
  }

  /** A cancel or stop request from any instance: aborts the turn if it runs here. */
  requested(taskId: string, how: TurnEnding): void {
    this.engine.abortTurn(taskId, how === 'stop' ? new TurnStopped() : new TurnCanceled());
  }

  /**
   * Cancels a turn running on another instance: asks it, then waits for the turn's final
   * status to arrive here. Resolves at once when no turn runs elsewhere any more.
   */
  private async cancelElsewhere(taskId: string, context: ServerCallContext): Promise<void> {
    const { coordination, buses } = this.engine;
    const unwatch = await buses.watch(taskId);
    const bus = buses.createOrGetByTaskId(taskId, context);
    const queue = new ExecutionEventQueue(bus);
    try {
      // Asked after listening starts, and only while the turn still runs, so its end is not missed.
      if (!(await coordination.turnHeld(taskId))) return;
      await coordination.requestCancel(taskId);
      // A request is a wake-up, not a record: an instance that did not hear it (its LISTEN
      // connection was down) hears it again, until the turn ends.
      const again = setInterval(() => {
        coordination
          .requestCancel(taskId)
          .catch((error: unknown) => this.engine.onError(error, 'asking for a cancel again', taskId));
      }, CANCEL_AGAIN_MS);
      try {
        for await (const _event of queue.events());
      } finally {
        clearInterval(again);
      }
    } finally {
      queue.stop();
      unwatch();
      buses.releaseIfUnused(taskId, context, (id) => this.engine.runsHere(id));
    }
  }
}

/** Canceled while this cancel ran (nothing left to do), or ended before it (not cancelable). */
function endedAlready(task: Task, whileCanceling: boolean): boolean {
  const state = task.status?.state;
  if (state === TaskState.TASK_STATE_CANCELED && whileCanceling) return true;
  if (isTerminal(state)) throw new HarnessError('task_not_cancelable', `Task not cancelable: ${task.id}`);
  return false;
}

/**
 * The CANCELED status of a task no turn runs: the calls it left waiting for approval (CMD-33)
 * are closed as canceled in its message.
 */
function canceledIdle(task: Task): TaskStatusUpdateEvent {
  const waiting = waitingCalls(task.history)?.map((w) => w.call) ?? [];
  let message: Message | undefined;
  if (waiting.length > 0) {
    message = agentMessage(
      task.id,
      task.contextId,
      'The task was canceled; the tool calls waiting for approval were not made.',
      'canceled',
    );
    message.parts.push(...closingParts(waiting));
  }
  return statusUpdate(task.id, task.contextId, TaskState.TASK_STATE_CANCELED, message);
}
