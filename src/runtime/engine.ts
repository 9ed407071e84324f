import { TaskState, type Message, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';
import type { CommandTaskPort, DecidedUpdate } from '../commands/index.js';
import { hasErrorCode } from '../errors.js';
import { CancelAndStop } from './cancel-and-stop.js';
import type { Coordination } from './coordination.js';
import { TaskBuses } from './task-buses.js';
import type { SubtaskRecords } from './task-state.js';
import { TaskWrites, type DecideStatus } from './task-writes.js';
import { TurnCanceled, TurnInterrupted, TurnStopped, type Turn, type TurnAbortReason } from './turns.js';
import { untilDone } from './until-done.js';
import { WorkUnderWay } from './work-under-way.js';

/** What the engine writes tasks through: the harness's task store, as the SDK's handler sees it. */
export interface EngineTaskStore {
  save(task: Task, context: ServerCallContext): Promise<void>;
  /** The task as stored, if the caller's scope holds it. */
  load(taskId: string, context: ServerCallContext): Promise<Task | undefined>;
  /**
   * Read, decide and write as one step, under the task's write lock (see `SqlTaskStore.modify`).
   * A message of the history stored already (its id and content) is kept as stored, not added again: the
   * engine appends without looking, since a scan of the history on every post cost a command on a
   * 10,000-message task about 1 ms (a profile of bench/long-conversations.ts).
   */
  modify(
    taskId: string,
    context: ServerCallContext,
    change: (task: Task) => Promise<Task | undefined> | Task | undefined,
    /** The events that say what the write changed, handed to other instances with it (shared store). */
    handOn?: () => readonly AgentExecutionEvent[],
  ): Promise<Task | undefined>;
  /** Resolves once every write of the task under way, on any instance, has committed. */
  awaitWritesUnderWay(taskId: string): Promise<void>;
}

/** How a turn ended, for whoever waits on turns (sub-task notes). */
export interface TurnEnd {
  task: Pick<Task, 'id' | 'metadata'>;
  state: TaskState;
  /** What the final status message says. */
  text: string;
  /** The context of the request that started the turn; none for a turn ended by recovery. */
  context: ServerCallContext | undefined;
}

export interface TaskEngineOptions {
  coordination: Coordination;
  store: EngineTaskStore;
  /** Where a sub-task is stored with its link and model, in one transaction (none: no sub-tasks). */
  subtasks?: SubtaskRecords;
  /** The buses to run on; by default new ones over `coordination` (tests pass observed ones). */
  buses?: TaskBuses;
  /** Told about failures nobody waits for: a listener of turn ends, following another instance. */
  onError: (error: unknown, what: string, taskId?: string) => void;
}

/**
 * The one writer of tasks outside a turn's own events. It keeps the rules that hold a task
 * together, on one instance or many sharing a store:
 * - one turn per task: `reserve` takes the task's lease before the SDK loads it (its epoch
 *   fences the turn's writes), `begin` and `end` bracket the turn; its lease is released before
 *   its final status is published, so that a reply stored after that sees the task as it stays;
 * - replies and notes (`post`) and status changes from outside a turn (`settle`) are stored under
 *   the task's write lock, then published to every stream open on the task, here and on the
 *   other instances (`task-writes.ts`);
 * - `cancel` and `stop` reach the turn wherever it runs (`cancel-and-stop.ts`); a canceled
 *   turn's CANCELED status is stored here, when the turn ends; `abortTurn` is the one place a
 *   turn is aborted;
 * - sub-tasks are created here (`createSubtask`); turns cut short are ended by recovery
 *   (`recovery.ts`) through `settle`;
 * - `drain` ends every turn here as interrupted and waits for their streams to be stored.
 * The SDK's handler, result manager and event queues still run a turn, on the engine's buses.
 */
export class TaskEngine implements CommandTaskPort {
  readonly buses: TaskBuses;
  /** Tasks reserved for a turn, with their lease's epoch and how to stop watching them. */
  private readonly reserved = new Map<string, Reservation>();
  private readonly running = new Map<string, RunningTurn>();
  /** Turns ended here whose streams may still be storing their events (`turnOf`, `forget`). */
  private readonly endedTurns = new Map<string, RunningTurn>();
  /** Cancel or stop requests for turns reserved here but not begun yet. */
  private readonly abortBeforeBegin = new Map<string, TurnCanceled | TurnStopped>();
  /** Turn streams and posts under way: what `drain` waits for. */
  private readonly underWay = new WorkUnderWay();
  private readonly endListeners: ((end: TurnEnd) => Promise<void>)[] = [];
  private readonly writes: TaskWrites;
  private readonly cancels: CancelAndStop;
  private draining = false;

  constructor(private readonly options: TaskEngineOptions) {
    this.buses =
      options.buses ??
      new TaskBuses(
        options.coordination,
        (error, taskId) => options.onError(error, 'following a task on other instances', taskId),
        (taskId) => this.running.has(taskId),
      );
    this.writes = new TaskWrites(options.store, this.buses, (taskId) => this.isBusy(taskId));
    this.cancels = new CancelAndStop({
      coordination: options.coordination,
      buses: this.buses,
      store: options.store,
      runsHere: (taskId) => this.runsHere(taskId),
      isBusy: (taskId) => this.isBusy(taskId),
      abortTurn: (taskId, reason) => this.abortTurn(taskId, reason),
      turnDone: (taskId) => (this.running.get(taskId) ?? this.reserved.get(taskId))?.ended ?? Promise.resolve(),
      settle: (taskId, context, decide) => this.settle(taskId, context, decide),
      onError: options.onError,
    });
    options.coordination.onCancelRequest((taskId, how) => this.cancels.requested(taskId, how));
  }

  get coordination(): Coordination {
    return this.options.coordination;
  }

  /** Whether a turn is starting or running on the task, on any instance. */
  isBusy(taskId: string): Promise<boolean> {
    if (this.reserved.has(taskId) || this.running.has(taskId)) return Promise.resolve(true);
    return this.options.coordination.turnHeld(taskId);
  }

  /** Whether the task's turn runs on this instance. */
  runsHere(taskId: string): boolean {
    return this.running.has(taskId) || this.reserved.has(taskId);
  }

  /** Takes the task for one turn; false when a turn holds it already, here or elsewhere. */
  async reserve(taskId: string): Promise<boolean> {
    if (this.draining || this.runsHere(taskId)) return false;
    const reservation: Reservation = { ...endOfTurn(), epoch: 0, unwatch: () => undefined };
    this.reserved.set(taskId, reservation);
    try {
      const epoch = await this.options.coordination.acquireTurn(taskId);
      if (epoch === undefined) {
        this.reserved.delete(taskId);
        reservation.endWith(undefined);
        return false;
      }
      reservation.epoch = epoch;
      reservation.unwatch = await this.buses.watch(taskId);
      return true;
    } catch (error) {
      this.reserved.delete(taskId);
      reservation.endWith(undefined);
      throw error;
    }
  }

  /**
   * Gives back a reservation whose turn never began (the request was refused first). A reply
   * posted meanwhile said WORKING, for the turn that was about to start (CMD-9); with no turn
   * coming, the task is set back to waiting for input, keeping that reply, so that it does not
   * stay WORKING with nothing running.
   */
  async release(taskId: string, context: ServerCallContext): Promise<void> {
    const reservation = this.reserved.get(taskId);
    if (!reservation || this.running.has(taskId)) return;
    this.reserved.delete(taskId);
    this.abortBeforeBegin.delete(taskId);
    reservation.unwatch();
    try {
      await this.options.coordination.releaseTurn(taskId);
      await this.settle(taskId, context, async (task) => {
        if (task.status?.state !== TaskState.TASK_STATE_WORKING || (await this.isBusy(taskId))) return undefined;
        return {
          taskId,
          contextId: task.contextId,
          status: { ...task.status, state: TaskState.TASK_STATE_INPUT_REQUIRED, timestamp: new Date().toISOString() },
          metadata: {},
        };
      }).catch((error: unknown) => {
        // A task the caller may not see, or that is gone: nothing of it to set back.
        if (!hasErrorCode(error, 'task_not_found')) throw error;
      });
    } finally {
      reservation.endWith(undefined);
    }
  }

  /**
   * Changes a task's status from outside a turn (recovery, a sub-task that could not start, a
   * reservation given back, a cancel): under the task's write lock, `decide` sees the task as
   * stored and returns the status update to apply, or nothing. The update's message joins the
   * history, and the update goes to every stream open on the task. Resolves with the update applied.
   */
  settle(taskId: string, context: ServerCallContext, decide: DecideStatus): Promise<TaskStatusUpdateEvent | undefined> {
    return this.track(this.writes.settle(taskId, context, decide));
  }

  /** Starts the turn the executor is about to run: on a reserved task, or a new one. */
  async begin(taskId: string, context: ServerCallContext | undefined): Promise<Turn> {
    let reservation = this.reserved.get(taskId);
    this.reserved.delete(taskId);
    // A new task: nobody else knows its id yet, so the lease is free.
    reservation ??= {
      ...endOfTurn(),
      epoch: (await this.options.coordination.acquireTurn(taskId)) ?? 0,
      unwatch: await this.buses.watch(taskId),
    };
    const turn: RunningTurn = { taskId, abort: new AbortController(), context, ...reservation };
    this.running.set(taskId, turn);
    this.endedTurns.delete(taskId);
    const asked = this.abortBeforeBegin.get(taskId);
    this.abortBeforeBegin.delete(taskId);
    if (this.draining) this.abortTurn(taskId, new TurnInterrupted());
    else if (asked) this.abortTurn(taskId, asked);
    return turn;
  }

  /**
   * The one place a turn is aborted: the turn running here on the task (only `which`, when
   * given), with why. A cancel or stop for a turn reserved here but not begun yet is kept and
   * applied at `begin`; a cancel asked for already is not made a mere stop.
   */
  abortTurn(taskId: string, reason: TurnAbortReason, which?: Turn): void {
    const turn = this.running.get(taskId);
    if (turn && (!which || which === turn)) turn.abort.abort(reason);
    else if (
      !turn &&
      this.reserved.has(taskId) &&
      (reason instanceof TurnCanceled || reason instanceof TurnStopped) &&
      !(this.abortBeforeBegin.get(taskId) instanceof TurnCanceled)
    )
      this.abortBeforeBegin.set(taskId, reason);
  }

  /** The turn of a stream on the task: the one running here, or the last one ended here. */
  turnOf(taskId: string): EndingTurn | undefined {
    return this.running.get(taskId) ?? this.endedTurns.get(taskId);
  }

  /** The turn's stream has ended: nothing more of it to store. */
  forget(turn: EndingTurn): void {
    if (this.endedTurns.get(turn.taskId) === turn) this.endedTurns.delete(turn.taskId);
  }

  /**
   * Ends the turn: the lease goes first, then `final`, the final status, is published. A reply
   * stored between the two sees the turn's last WORKING state, which the final status replaces.
   * A canceled turn's CANCELED status is stored and published here, under the task's write lock,
   * as every cancel's is; any other the caller publishes. Resolves with whether it was published here.
   */
  async end(turn: Turn, final?: TaskStatusUpdateEvent): Promise<boolean> {
    const running = this.running.get(turn.taskId);
    if (running !== turn) return false;
    this.running.delete(turn.taskId);
    this.endedTurns.set(turn.taskId, running);
    // Never throws: the final status must still go out.
    const retry = {
      stop: () => this.draining,
      onError: (error: unknown) => this.options.onError(error, 'ending a turn (trying again)', turn.taskId),
    };
    let published = false;
    try {
      // Tried again until released: a lease left held would refuse every later turn of the task.
      await untilDone(() => this.options.coordination.releaseTurn(turn.taskId), retry);
      // A reply stored on another instance while the lease still held said WORKING: it reaches
      // the turn's streams before the final status does (CMD-8, CMD-9). Each such reply chose
      // its state under the task's row lock, so once the writes under way have committed,
      // reading the task's events catches every one of them.
      await untilDone(() => this.options.store.awaitWritesUnderWay(turn.taskId), retry);
      await this.options.coordination.caughtUp(turn.taskId);
      if (final?.status?.state === TaskState.TASK_STATE_CANCELED && turn.abort.signal.reason instanceof TurnCanceled)
        published = await this.storeCanceled(turn, final);
    } catch (error) {
      this.options.onError(error, 'ending a turn', turn.taskId);
    } finally {
      running.unwatch();
      running.endWith(final);
    }
    return published;
  }

  /** Stores a canceled turn's final status; false when it could not (the turn then publishes it). */
  private async storeCanceled(turn: Turn, final: TaskStatusUpdateEvent): Promise<boolean> {
    if (!turn.context) return false;
    try {
      const stored = await this.settle(turn.taskId, turn.context, (task) =>
        task.status?.state === TaskState.TASK_STATE_SUBMITTED || task.status?.state === TaskState.TASK_STATE_WORKING
          ? final
          : undefined,
      );
      return stored !== undefined;
    } catch (error) {
      this.options.onError(error, 'storing a canceled turn', turn.taskId);
      return false;
    }
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

  create(task: Task, context: ServerCallContext): Promise<void> {
    return this.track(this.options.store.save(task, context));
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
    exchange: { message?: Message } = {},
  ): Promise<Task> {
    return this.track(this.writes.post(update, context, exchange));
  }

  /**
   * `CancelTask` (CMD-31), wherever the task's turn runs: the task, which the caller must see,
   * is stored CANCELED and every stream open on it sees that, once. Sub-tasks are the caller's.
   */
  cancel(taskId: string, context: ServerCallContext): Promise<void> {
    return this.cancels.cancel(taskId, context);
  }

  /** `/stop` (CMD-32), wherever the turn runs: it ends as a finished turn ends, keeping what it wrote. */
  stop(taskId: string): Promise<void> {
    return this.cancels.stop(taskId);
  }

  /**
   * Stops, starting no turn more: turns here end as interrupted, and their streams and the posts
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
    return { turns: this.running.size + this.endedTurns.size, writes: this.underWay.size };
  }

  /** Whether the engine is stopping (`drain`): no turn starts, and nothing is tried again. */
  get stopping(): boolean {
    return this.draining;
  }

  /** Counts `work` as under way until it settles: `drain` waits for it. */
  track<T>(work: Promise<T>): Promise<T> {
    return this.underWay.track(work);
  }
}

/** A turn as its stream knows it: `ended` resolves, once it has ended, with its final status. */
export interface EndingTurn extends Turn {
  readonly ended: Promise<TaskStatusUpdateEvent | undefined>;
}

/** How a turn's end is told: from its reservation on (a cancel waits on it), resolved at its end or when given back. */
interface EndOfTurn {
  ended: Promise<TaskStatusUpdateEvent | undefined>;
  endWith: (final: TaskStatusUpdateEvent | undefined) => void;
}

interface Reservation extends EndOfTurn {
  epoch: number;
  unwatch: () => void;
}

type RunningTurn = EndingTurn & Reservation;

function endOfTurn(): EndOfTurn {
  let endWith!: (final: TaskStatusUpdateEvent | undefined) => void;
  const ended = new Promise<TaskStatusUpdateEvent | undefined>((resolve) => (endWith = resolve));
  return { ended, endWith };
}
