import { TaskState, type Message, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent, type ServerCallContext } from '@a2a-js/sdk/server';
import type { ClaimKey, DecidedUpdate } from '../commands/index.js';
import { HarnessError } from '../errors.js';
import type { EngineStore } from '../engine-ports.js';
import { markGeneration } from '../a2a/index.js';
import { withGeneration } from './turn/turn-stream.js';
import { visibleHistory } from '../conversation/visible.js';

/**
 * Decides, on the task as stored under its lock, the status update to apply, or nothing. Pure:
 * it may run more than once for one write (`EngineStore.modify`); the last answer is applied.
 */
export type DecideStatus = (
  task: Task,
) => Promise<TaskStatusUpdateEvent | undefined> | TaskStatusUpdateEvent | undefined;

/**
 * The engine's writes of a status from outside a turn's own events: each decided and stored
 * under the task's write lock (and, shared, its row lock), appended to the task's log, which
 * every stream open on the task reads, here or elsewhere (CMD-8, CMD-9).
 */
export class TaskWrites {
  constructor(private readonly store: Pick<EngineStore, 'modify'>) {}

  /**
   * A status change (recovery, a cancel): `decide` sees the task as stored and returns the
   * update to apply, or nothing. The update's message joins the history. Resolves with the
   * update applied.
   */
  async settle(
    taskId: string,
    context: ServerCallContext,
    decide: DecideStatus,
  ): Promise<TaskStatusUpdateEvent | undefined> {
    let update: TaskStatusUpdateEvent | undefined;
    const stored = await this.store.modify(taskId, context, async (task) => {
      update = await decide(task);
      return update?.status ? { events: [AgentEvent.statusUpdate(update)] } : undefined;
    });
    return stored?.logged.length ? update : undefined;
  }

  /**
   * A reply or note, with the command message it answers: both go into the history in one
   * write. The state stays the task's (CMD-4), but for a turn under way, whose replies say
   * WORKING (CMD-9): a task stored SUBMITTED or WORKING has its turn running, or one cut short,
   * which recovery ends. Resolves with the task as stored.
   */
  async post(
    given: TaskStatusUpdateEvent | DecidedUpdate,
    context: ServerCallContext,
    exchange: { message?: Message; records?: Message[]; claim?: ClaimKey },
  ): Promise<Task> {
    const { claim } = exchange;
    let sent: TaskStatusUpdateEvent | undefined;
    const stored = await this.store.modify(given.taskId, context, async (task) => {
      const state = task.status?.state ?? TaskState.TASK_STATE_INPUT_REQUIRED;
      // The command (a resend's is stored already) joins the history first; the store keeps each message once.
      const history = exchange.message ? [exchange.message] : [];
      if ('decide' in given) task.history.push(...history);
      const { update, records = [] } =
        'decide' in given ? await given.decide(task) : { update: given, records: exchange.records };
      sent = update;
      // What the command did to the conversation (a compaction point, a rewind mark) comes before its reply.
      history.push(...records);
      if (update.status)
        update.status.state =
          state === TaskState.TASK_STATE_SUBMITTED || state === TaskState.TASK_STATE_WORKING
            ? TaskState.TASK_STATE_WORKING
            : state;
      const events = [AgentEvent.statusUpdate(update)];
      // The command's claim, accepted with its reply (`recordsClaims`): decided again with it on each run.
      if (!claim) return { history, events };
      const { scope, messageId, digest } = claim;
      return { history, events, claim: { ...scope, messageId, digest, reply: update } };
    });
    if (!stored) throw new HarnessError('task_not_found', `Task not found: ${given.taskId}`);
    // The task goes to the command's caller: as clients see it, without what a rewind hid (CMD-37).
    const history = visibleHistory(stored.task.history);
    const task = history === stored.task.history ? stored.task : { ...stored.task, history };
    // The reply as its caller sends it, and the task, carry the reply's generation (`GENERATION_KEY`).
    const generation = stored.logged.at(-1)?.generation;
    if (generation === undefined) return task;
    // Its metadata is exactly the extension's (CMD-4): marked, for its SSE id.
    if (sent) markGeneration(sent, generation);
    return withGeneration(task, generation);
  }
}
