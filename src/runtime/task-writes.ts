import { TaskState, type Message, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent, type ServerCallContext } from '@a2a-js/sdk/server';
import type { DecidedUpdate } from '../commands/index.js';
import { HarnessError } from '../errors.js';
import { isTerminal } from '../wire.js';
import type { EngineTaskStore } from './engine.js';
import type { TaskBuses } from './task-buses.js';

/** Decides, on the task as stored under its lock, the status update to apply, or nothing. */
export type DecideStatus = (
  task: Task,
) => Promise<TaskStatusUpdateEvent | undefined> | TaskStatusUpdateEvent | undefined;

/**
 * The engine's writes of a status from outside a turn's own events: each stored under the
 * task's write lock (and, shared, its row lock), handed to the other instances in the same
 * transaction, then delivered to every bus of the task here, so that every stream open on the
 * task, here or elsewhere, sees it (CMD-8, CMD-9).
 */
export class TaskWrites {
  constructor(
    private readonly store: EngineTaskStore,
    private readonly buses: Pick<TaskBuses, 'deliverHere'>,
    /** Whether a turn holds the task, on any instance: a reply then leaves it WORKING. */
    private readonly isBusy: (taskId: string) => Promise<boolean>,
  ) {}

  /**
   * A status change (recovery, a cancel, a turn's end the engine stores itself): `decide` sees
   * the task as stored and returns the update to apply, or nothing. The update's message joins
   * the history. Resolves with the update applied.
   */
  async settle(
    taskId: string,
    context: ServerCallContext,
    decide: DecideStatus,
  ): Promise<TaskStatusUpdateEvent | undefined> {
    let update: TaskStatusUpdateEvent | undefined;
    let event: AgentExecutionEvent | undefined;
    const stored = await this.store.modify(
      taskId,
      context,
      async (task) => {
        update = await decide(task);
        if (!update?.status) return undefined;
        task.status = update.status;
        // A note already stored (the status message kept as it was) is not stored twice (`EngineTaskStore`).
        if (update.status.message) task.history.push(update.status.message);
        return task;
      },
      () => [(event = AgentEvent.statusUpdate(update!))],
    );
    if (stored && update) this.buses.deliverHere(taskId, event ?? AgentEvent.statusUpdate(update));
    return update;
  }

  /**
   * A reply or note, with the command message it answers: both go into the history in one
   * write, with the state chosen inside the lock (WORKING while a turn holds the task, else the
   * task's own state). Resolves with the task as stored.
   */
  async post(
    given: TaskStatusUpdateEvent | DecidedUpdate,
    context: ServerCallContext,
    exchange: { message?: Message },
  ): Promise<Task> {
    let update!: TaskStatusUpdateEvent;
    let event: AgentExecutionEvent | undefined;
    const stored = await this.store.modify(
      given.taskId,
      context,
      async (task) => {
        const state = task.status?.state ?? TaskState.TASK_STATE_INPUT_REQUIRED;
        // The command (a resend's is stored already) and the reply; the store keeps each message once (`EngineTaskStore`).
        if (exchange.message) task.history.push(exchange.message);
        update = 'decide' in given ? await given.decide(task) : given;
        if (update.status)
          update.status.state =
            !isTerminal(state) && (await this.isBusy(task.id)) ? TaskState.TASK_STATE_WORKING : state;
        if (update.status?.message) task.history.push(update.status.message);
        if (update.status) task.status = update.status;
        return task;
      },
      // Handed to the other instances in the write's transaction: stored and sent as one.
      () => [(event = AgentEvent.statusUpdate(update))],
    );
    if (!stored) throw new HarnessError('task_not_found', `Task not found: ${given.taskId}`);
    this.buses.deliverHere(given.taskId, event ?? AgentEvent.statusUpdate(update));
    return stored;
  }
}
