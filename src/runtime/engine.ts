import { randomUUID } from 'node:crypto';
import type { Message, Task, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';
import type { ClaimKey, CommandTaskPort, DecidedUpdate } from '../commands/index.js';
import {
  generationMismatch,
  hasErrorCode,
  instanceDraining,
  isHarnessError,
  turnFencedError,
  turnInProgress,
} from '../errors.js';
import { CancelAndStop } from './cancel-and-stop.js';
import type {
  EngineStore,
  RunningTurn,
  StartedTurn,
  Turn,
  TurnEnd,
  TurnOptions,
  TurnStarter,
} from '../engine-ports.js';
import type { HarnessExecutor, TurnRequest } from './executor.js';
import { openableTask } from './openable-task.js';
import { TaskWrites, type DecideStatus } from './task-writes.js';
import type { TurnLimit } from './turn/turn-limit.js';
import { turnStream } from './turn/turn-stream.js';
import { TurnWriter } from './turn/turn-writer.js';
import { TurnFenced, TurnInterrupted, TurnUnwritten, type TurnAbortReason } from './turn/turns.js';
import { untilDone } from '../until-done.js';
import { within, WorkUnderWay } from './work-under-way.js';
import { traceTurn } from '../telemetry/traces.js';
import type { Coordination, LogSubscription, SubtaskRecords, TaskStateStore } from '../ports.js';

export interface TaskEngineOptions {
  coordination: Coordination;
  store: EngineStore;
  /** The readers of task logs here (`Store.feeds`). */
  feeds: { follow(taskId: string, known?: number): Promise<LogSubscription> };
  /** Where a turn reads its task as clients see it (sub-task links shown: a sub-task's turn ends as one); default `store`. */
  view?: Pick<EngineStore, 'read'>;
  /** Where a sub-task is stored with its link and model, in one transaction (none: no sub-tasks). */
  subtasks?: SubtaskRecords;
  /** Whose sub-tasks a cancel reaches too (CMD-31); none: only the task. */
  links?: Pick<TaskStateStore, 'getLinks'>;
  /** The most turns in flight here; none: no bound. */
  limit?: TurnLimit;
  /** Told about failures nobody waits for: a listener of turn ends, a turn's end not stored. */
  onError: (error: unknown, what: string, taskId?: string) => void;
  /** Told once per turn fenced off its task (another instance took it over while this one stalled). */
  onFenced?: (taskId: string, epoch: number) => void;
}

/**
 * The one writer of tasks. Every change to a task is an event the engine appends to the task's
 * log, with the task it produces, in one transaction (`SqlTaskStore`); streams, subscriptions,
 * blocking answers and other instances read that log. Its rules:
 * - one turn per task, on any instance: `startTurn` takes the task's lease (its epoch fences
 *   the turn's writes) and runs the executor, storing each event it publishes (`TurnWriter`);
 *   the turn's final status is stored, then the lease goes back;
 * - replies and notes (`post`) and status changes from outside a turn (`settle`) are stored under
 *   the task's write lock (`task-writes.ts`);
 * - `cancel` and `stop` reach the turn wherever it runs (`cancel-and-stop.ts`); `abortTurn` is
 *   the one place a turn is aborted;
 * - sub-tasks are created here (`createSubtask`); turns cut short are ended by recovery
 *   (`recovery.ts`) through `settle`;
 * - `drain` ends every turn here as interrupted and waits for their ends to be stored.
 */
export class TaskEngine implements CommandTaskPort, TurnStarter {
  private readonly running = new Map<string, RunningTurn>();
  /** Turn ends and posts under way: what `drain` waits for. */
  private readonly underWay = new WorkUnderWay();
  private readonly endListeners: ((end: TurnEnd) => Promise<void>)[] = [];
  private readonly releaseListeners: ((taskId: string, queued: boolean | undefined) => void)[] = [];
  private readonly writes: TaskWrites;
  private readonly cancels: CancelAndStop;
  private executor: Pick<HarnessExecutor, 'run'> | undefined;
  private draining = false;
  /** Wakes the waits of `finishTurns` once no turn runs here. */
  private readonly noTurnsLeft = new Set<() => void>();

  constructor(private readonly options: TaskEngineOptions) {
    this.writes = new TaskWrites(options.store);
    this.cancels = new CancelAndStop({
      coordination: options.coordination,
      feeds: options.feeds,
      store: options.store,
      links: options.links,
      runsHere: (taskId) => this.runsHere(taskId),
      abortTurn: (taskId, reason) => this.abortTurn(taskId, reason),
      turnDone: (taskId) => this.running.get(taskId)?.done ?? Promise.resolve(),
      settle: (taskId, context, decide) => this.settle(taskId, context, decide),
      onError: options.onError,
    });
    options.coordination.onCancelRequest((taskId, how) => this.cancels.requested(taskId, how));
  }

  get coordination(): Coordination {
    return this.options.coordination;
  }

  /** Whether a reply's write accepts its command's claim (the store's `recordsClaims`). */
  get recordsClaims(): boolean {
    return this.options.store.recordsClaims ?? false;
  }

  /** What runs turns; set once, before the first turn (the executor needs the engine's store views). */
  runTurnsWith(executor: Pick<HarnessExecutor, 'run'>): void {
    this.executor = executor;
  }

  /** Whether a turn is starting or running on the task, on any instance. */
  isBusy(taskId: string): Promise<boolean> {
    if (this.running.has(taskId)) return Promise.resolve(true);
    return this.options.coordination.turnHeld(taskId);
  }

  /** Whether the task's turn runs on this instance. */
  runsHere(taskId: string): boolean {
    return this.running.has(taskId);
  }

  /**
   * Starts a turn on the message's task (a new task when it names none): every turn starts here,
   * from a request, a sub-task or `/approve`. Refused before anything is stored: at the limit of
   * turns in flight (`turns_at_limit`), while the instance drains (`instance_draining`), a task the caller may not see (`task_not_found`) or that
   * has ended (`task_ended`), a turn already running on it (`turn_in_progress`).
   */
  async startTurn(message: Message, context: ServerCallContext, options: TurnOptions = {}): Promise<StartedTurn> {
    const { limit, coordination } = this.options;
    // Taken first, before any read or write: under load, a refusal must cost nothing.
    const place = options.pastLimit ? limit?.takePastLimit() : limit?.take();
    let turn: RunningTurn | undefined;
    let subscription: LogSubscription | undefined;
    try {
      if (this.draining) throw instanceDraining();
      const stored = message.taskId
        ? await openableTask(this.options.view ?? this.options.store, message, context)
        : undefined;
      const taskId = stored?.task.id ?? options.newTaskId ?? randomUUID();
      const contextId = stored?.task.contextId ?? (message.contextId || randomUUID());
      // A task that moved on is told so even while busy: what the client read is out of date either way.
      const expected = stored ? options.ifGeneration : undefined;
      if (stored && expected !== undefined) requireGeneration(taskId, stored.generation, expected);
      if (this.running.has(taskId)) throw turnInProgress(taskId);
      const epoch =
        options.heldEpoch ?? (await coordination.acquireTurn(taskId, { unlessQueued: options.unlessQueued }));
      if (epoch === undefined) throw turnInProgress(taskId);
      turn = { taskId, epoch, abort: new AbortController(), context, done: Promise.resolve() };
      this.running.set(taskId, turn);
      // Again under the lease: a turn that ended between the read and the lease moved the task on.
      if (expected !== undefined) await this.requireGenerationNow(taskId, context, expected);
      if (options.beforeTurn) await options.beforeTurn(taskId);
      // Before the turn's first write: the turn's stream misses none of its events.
      subscription = await this.options.feeds.follow(taskId, stored?.generation ?? 0);
      // A drain that began during the awaits above refuses the turn, retryably, before its first
      // write: taken and then interrupted, it would end the client's turn with nothing.
      if (this.draining) throw instanceDraining();
      const userMessage = { ...message, taskId, contextId };
      const opening = options.opening?.(stored?.task);
      const request: TurnRequest = { taskId, contextId, userMessage, opening, task: stored?.task, context };
      const running = turn;
      turn.done = this.track(this.run(running, request, subscription)).finally(() => place?.release());
      const events = subscription;
      return {
        taskId,
        events: turnStream(events, running, context),
        done: turn.done,
        detach: () => events.close(),
      };
    } catch (error) {
      subscription?.close();
      const held = turn?.taskId ?? (options.heldEpoch === undefined ? undefined : message.taskId);
      if (turn) this.forget(turn);
      if (held)
        await coordination
          .releaseTurn(held)
          .catch((releaseError: unknown) =>
            this.options.onError(releaseError, 'giving back a turn that could not start', held),
          );
      place?.release();
      throw error;
    }
  }

  /** Refuses the turn unless the task, read now, is at generation `expected`. */
  private async requireGenerationNow(taskId: string, context: ServerCallContext, expected: number): Promise<void> {
    const now = await (this.options.view ?? this.options.store).read(taskId, context);
    if (now) requireGeneration(taskId, now.generation, expected);
  }

  /** Runs the turn and stores its end; never rejects. */
  private async run(turn: RunningTurn, request: TurnRequest, subscription: LogSubscription): Promise<void> {
    const { store } = this.options;
    const writer = new TurnWriter(
      (events, replyAfter) => store.append(turn.taskId, turn.context, events, { fence: turn.epoch, replyAfter }),
      (error) => this.writeFailed(turn, error),
    );
    let final: TaskStatusUpdateEvent | undefined;
    let told: TurnEnd | undefined;
    try {
      if (!this.executor) throw new Error('The engine was given nothing to run turns with.');
      ({ final, told } = await traceTurn(request, () => this.executor!.run(request, turn, writer)));
      await writer.flushed();
      if (final && !turn.fenced) await this.storeEnd(turn, writer, final);
      else subscription.fail(turnFencedError(turn.taskId));
    } catch (error) {
      this.options.onError(error, 'running a turn', turn.taskId);
      subscription.fail(error);
    } finally {
      await this.release(turn);
    }
    if (told) this.ended(told);
  }

  /** Stores the turn's final status: after a failed write, tried again until stored (unless stopping). */
  private async storeEnd(turn: RunningTurn, writer: TurnWriter, final: TaskStatusUpdateEvent): Promise<void> {
    const { store } = this.options;
    const event: AgentExecutionEvent = { kind: 'statusUpdate', data: final };
    if (!writer.failed) {
      await writer.end(event);
      if (!writer.failed) return;
    }
    if (turn.fenced) throw turnFencedError(turn.taskId);
    // The turn's stream starts at its task event: stored first if the failed write held it.
    const opening = writer.openingUnwritten;
    const events = opening ? [opening, event] : [event];
    const write = { fence: turn.epoch, replyAfter: writer.replyAfter };
    await untilDone(() => store.append(turn.taskId, turn.context, events, write), {
      giveUp: this.stopTrying,
      onError: (error) => this.options.onError(error, 'storing the end of a turn (trying again)', turn.taskId),
    });
  }

  /** A write of the turn failed: fenced, it stops and writes nothing more; otherwise it ends saying so. */
  private writeFailed(turn: RunningTurn, error: unknown): void {
    if (isHarnessError(error) && error.code === 'turn_fenced') {
      turn.fenced = true;
      this.abortTurn(turn.taskId, new TurnFenced(), turn);
      this.options.onFenced?.(turn.taskId, turn.epoch);
      return;
    }
    this.options.onError(error, 'storing an event of a turn', turn.taskId);
    this.abortTurn(turn.taskId, new TurnUnwritten(), turn);
  }

  /** Whether to stop trying a turn's end again: the instance stops, or the task is gone. */
  private readonly stopTrying = (error: unknown): boolean => this.draining || hasErrorCode(error, 'task_not_found');

  /** Gives the turn's lease back, tried again until done (a lease left held refuses every later turn). */
  private async release(turn: RunningTurn): Promise<void> {
    let queued: boolean | undefined;
    try {
      queued = await untilDone(() => this.options.coordination.releaseTurn(turn.taskId), {
        giveUp: this.stopTrying,
        onError: (error) => this.options.onError(error, 'ending a turn (trying again)', turn.taskId),
      });
    } catch (error) {
      this.options.onError(error, 'ending a turn', turn.taskId);
    } finally {
      this.forget(turn);
    }
    for (const listener of this.releaseListeners) listener(turn.taskId, queued);
  }

  /** The turn is no longer here; the last one gone wakes whoever waits for the turns to finish. */
  private forget(turn: RunningTurn): void {
    if (this.running.get(turn.taskId) === turn) this.running.delete(turn.taskId);
    if (this.running.size === 0) for (const wake of this.noTurnsLeft) wake();
  }

  /**
   * Told each time a turn here has given its task back, with whether messages wait in its queue
   * (undefined: not known), for the queue to run the next; must not throw.
   */
  onTurnReleased(listener: (taskId: string, queued: boolean | undefined) => void): void {
    this.releaseListeners.push(listener);
  }

  /**
   * Changes a task's status from outside a turn (recovery, a sub-task that could not start, a
   * cancel): under the task's write lock, `decide` sees the task as stored and returns the status
   * update to apply, or nothing. The update's message joins the history, and the update is
   * appended to the task's log. Resolves with the update applied.
   */
  settle(taskId: string, context: ServerCallContext, decide: DecideStatus): Promise<TaskStatusUpdateEvent | undefined> {
    return this.track(this.writes.settle(taskId, context, decide));
  }

  /**
   * The one place a turn is aborted: the turn running here on the task (only `which`, when
   * given), with why. A cancel asked for already is not made a mere stop.
   */
  abortTurn(taskId: string, reason: TurnAbortReason, which?: Turn): void {
    const turn = this.running.get(taskId);
    if (!turn || (which && which !== turn) || turn.abort.signal.aborted) return;
    turn.abort.abort(reason);
  }

  /** Tells the listeners of turn ends (sub-task notes); never throws. */
  ended(end: TurnEnd): void {
    for (const listener of this.endListeners) {
      this.track(listener(end)).catch((error: unknown) =>
        this.options.onError(error, 'telling how a turn ended', end.task.id),
      );
    }
  }

  onTurnEnd(listener: (end: TurnEnd) => Promise<void>): void {
    this.endListeners.push(listener);
  }

  async create(task: Task, context: ServerCallContext): Promise<void> {
    await this.track(this.options.store.create(task, context));
  }

  /** Stores a new sub-task of `parentId`, with its link and its model, in one transaction; its turn starts after. */
  createSubtask(subtask: Task, parentId: string, model: string, context: ServerCallContext): Promise<void> {
    const records = this.options.subtasks;
    if (!records) return Promise.reject(new Error('This engine was given no store of sub-tasks.'));
    return this.track(records.createSubtask(subtask, parentId, model, context));
  }

  post(
    update: TaskStatusUpdateEvent | DecidedUpdate,
    context: ServerCallContext,
    exchange: { message?: Message; records?: Message[]; claim?: ClaimKey } = {},
  ): Promise<Task> {
    return this.track(this.writes.post(update, context, exchange));
  }

  /**
   * `CancelTask` (CMD-31), wherever the task's turn runs, then each of its sub-tasks: the task,
   * which the caller must see, is stored CANCELED and every stream open on it sees that, once.
   */
  cancel(taskId: string, context: ServerCallContext): Promise<void> {
    return this.cancels.cancelWithSubtasks(taskId, context);
  }

  /** `/stop` (CMD-32), wherever the turn runs: it ends as a finished turn ends, keeping what it wrote. */
  stop(taskId: string): Promise<void> {
    return this.cancels.stop(taskId);
  }

  /**
   * Starts draining: every new turn is refused from now on (`instance_draining`, retryable);
   * the turns here go on. Resolves true once none is left, false past `ms` or once `skip` fired
   * (then `drain` ends those left).
   */
  async finishTurns(ms: number, skip?: AbortSignal): Promise<boolean> {
    this.draining = true;
    if (this.running.size === 0) return true;
    let wake!: () => void;
    const none = new Promise<void>((resolve) => this.noTurnsLeft.add((wake = resolve)));
    try {
      return await within(none, ms, skip);
    } finally {
      this.noTurnsLeft.delete(wake);
    }
  }

  /**
   * Stops, starting no turn more: turns here end as interrupted, and their ends and the posts
   * under way get up to `graceMs` to be stored; then the coordination closes (not waited for with
   * writes left: the database may hold them). Resolves with the turns and writes left unstored.
   */
  async drain(graceMs = Infinity): Promise<{ turns: number; writes: number }> {
    this.draining = true;
    for (const taskId of this.running.keys()) this.abortTurn(taskId, new TurnInterrupted());
    const stored = await this.underWay.settled(graceMs);
    const closing = this.options.coordination.close();
    if (stored) await closing;
    else closing.catch((error: unknown) => this.options.onError(error, 'closing the coordination'));
    return { turns: this.running.size, writes: this.underWay.size };
  }

  /** Counts `work` as under way until it settles: `drain` waits for it. */
  track<T>(work: Promise<T>): Promise<T> {
    return this.underWay.track(work);
  }
}

function requireGeneration(taskId: string, current: number, expected: number): void {
  if (current !== expected) throw generationMismatch(taskId, expected, current);
}
