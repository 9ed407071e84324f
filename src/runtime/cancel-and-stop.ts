import type { ServerCallContext } from '@a2a-js/sdk/server';
import { TaskState, type Message, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { hasErrorCode, HarnessError } from '../errors.js';
import { isTerminal } from '../wire.js';
import type { EngineStore } from '../engine-ports.js';
import { agentMessage, statusUpdate } from './events.js';
import type { DecideStatus } from './task-writes.js';
import { isFinalStatus } from './turn/turn-stream.js';
import { waitingCalls } from './tool-approvals.js';
import { closingParts } from './tool-calls.js';
import { TurnCanceled, TurnStopped } from './turn/turns.js';
import type { Coordination, LogSubscription, TaskStateStore, TurnEnding } from '../ports.js';

/** How often a cancel request for a turn on another instance is repeated until the turn ends. */
const CANCEL_AGAIN_MS = 2000;

/** What cancel and stop need of the engine: its turns here, its writes, the task logs. */
export interface CancelTarget {
  readonly coordination: Coordination;
  readonly feeds: { follow(taskId: string): Promise<LogSubscription> };
  readonly store: Pick<EngineStore, 'load'>;
  /** Whose sub-tasks a cancel reaches too (CMD-31). */
  readonly links?: Pick<TaskStateStore, 'getLinks'>;
  runsHere(taskId: string): boolean;
  abortTurn(taskId: string, reason: TurnCanceled | TurnStopped): void;
  /** Resolves once the turn reserved or running here on the task has ended (or was given back). */
  turnDone(taskId: string): Promise<unknown>;
  settle(taskId: string, context: ServerCallContext, decide: DecideStatus): Promise<TaskStatusUpdateEvent | undefined>;
  onError(error: unknown, what: string, taskId?: string): void;
}

/**
 * `CancelTask` and `/stop` (CMD-31, CMD-32), wherever the task's turn runs. The turn is aborted
 * by the instance running it (`abortTurn` there, asked through `Coordination.requestCancel`);
 * a canceled turn ends CANCELED, stored by that instance's engine as every turn's end is; an
 * idle task's CANCELED is stored by this one, under the task's write lock. Either way it is one
 * status update in the task's log, which every stream open on the task reads.
 */
export class CancelAndStop {
  constructor(private readonly engine: CancelTarget) {}

  /**
   * Cancels the task, then each of its sub-tasks the same way (CMD-31). The parent is canceled
   * first: one child that cannot be canceled must not keep the others running, so each
   * failure is reported and the cascade goes on.
   */
  async cancelWithSubtasks(taskId: string, context: ServerCallContext): Promise<void> {
    if (!taskId?.trim()) throw new HarnessError('params_invalid', 'Task ID is required');
    await this.cancel(taskId, context);
    const { children } = (await this.engine.links?.getLinks(taskId)) ?? { children: [] };
    for (const childId of children) {
      try {
        await this.cancelWithSubtasks(childId, context);
      } catch (error) {
        // A child that ended (or went) on its own meanwhile is the expected race, not a failure.
        if (!hasErrorCode(error, 'task_not_cancelable') && !hasErrorCode(error, 'task_not_found'))
          this.engine.onError(error, 'canceling a sub-task of a canceled task', childId);
      }
    }
  }

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
        await this.cancelElsewhere(taskId);
      }
      let turnBegan = false;
      await engine.settle(taskId, context, async (stored) => {
        if (endedAlready(stored, true)) return undefined;
        // A turn began after the one canceled ended: it is canceled in its turn.
        if ((turnBegan = engine.runsHere(taskId) || (await engine.coordination.turnHeld(taskId)))) return undefined;
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
   * status in the task's log. Resolves at once when no turn runs elsewhere any more.
   */
  private async cancelElsewhere(taskId: string): Promise<void> {
    const { coordination, feeds } = this.engine;
    const subscription = await feeds.follow(taskId);
    try {
      // Asked after following begins, and only while the turn still runs, so its end is not missed.
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
        for (;;) {
          const entry = await subscription.next();
          if (!entry || isFinalStatus(entry.event)) return;
        }
      } finally {
        clearInterval(again);
      }
    } finally {
      subscription.close();
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
