import { TaskState, type Message, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent, ExecutionEventQueue, type AgentExecutionEvent, type ServerCallContext } from '@a2a-js/sdk/server';
import type { CommandTaskPort, DecidedUpdate } from '../commands/index.js';
import { hasErrorCode, HarnessError } from '../errors.js';
import { isTerminal } from '../wire.js';
import type { Coordination, TurnEnding } from './coordination.js';
import { TaskBuses } from './task-buses.js';
import { TurnInterrupted, TurnStopped, type Turn } from './turns.js';
import { untilDone } from './until-done.js';
import { WorkUnderWay } from './work-under-way.js';

const CANCEL_AGAIN_MS = 2000; // a cancel request to another instance, repeated until its turn ends

/** What the engine writes tasks through: the harness's task store, as the SDK's handler sees it. */
export interface EngineTaskStore {
  save(task: Task, context: ServerCallContext): Promise<void>;
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
  /** The buses to run on; by default new ones over `coordination` (tests pass observed ones). */
  buses?: TaskBuses;
  /** Told about failures nobody waits for: a listener of turn ends, following another instance. */
  onError: (error: unknown, what: string, taskId?: string) => void;
}

/**
 * The one writer of tasks. Everything that changes a task goes through it, and it keeps the
 * rules that hold a task together, on one instance or many sharing a store:
 * - one turn per task: `reserve` takes the task's lease before the SDK loads it (its epoch
 *   fences the turn's writes), `begin` and `end` bracket the turn; its lease is released before
 *   its final status is published, so that a reply stored after that sees the task as it stays;
 * - replies and notes (`post`) are stored under the task's write lock with the state they leave
 *   it in chosen inside that lock (CMD-9), then published to every stream open on the task,
 *   here and on the other instances (`TaskBuses`);
 * - cancelling a turn that runs on another instance asks that instance (`cancelElsewhere`);
 * - turns cut short are ended by recovery (`recovery.ts`);
 * - `drain` ends every turn here as interrupted and waits for their streams to be stored.
 * The SDK's handler, result manager and event queues still run a turn, on the engine's buses.
 */
export class TaskEngine implements CommandTaskPort {
  readonly buses: TaskBuses;
  /** Tasks reserved for a turn, with their lease's epoch and how to stop watching them. */
  private readonly reserved = new Map<string, { epoch: number; unwatch: () => void }>();
  private readonly running = new Map<string, RunningTurn>();
  /** Turns ended here whose streams may still be storing their events (`turnOf`, `forget`). */
  private readonly endedTurns = new Map<string, RunningTurn>();
  /** Cancel or stop requests for turns reserved here but not begun yet. */
  private readonly cancelBeforeBegin = new Map<string, TurnEnding>();
  /** Turn streams and posts under way: what `drain` waits for. */
  private readonly underWay = new WorkUnderWay();
  private readonly endListeners: ((end: TurnEnd) => Promise<void>)[] = [];
  private draining = false;

  constructor(private readonly options: TaskEngineOptions) {
    this.buses =
      options.buses ??
      new TaskBuses(
        options.coordination,
        (error, taskId) => options.onError(error, 'following a task on other instances', taskId),
        (taskId) => this.running.has(taskId),
      );
    options.coordination.onCancelRequest((taskId, how) => this.cancelHere(taskId, how));
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
    this.reserved.set(taskId, { epoch: 0, unwatch: () => undefined });
    try {
      const epoch = await this.options.coordination.acquireTurn(taskId);
      if (epoch === undefined) {
        this.reserved.delete(taskId);
        return false;
      }
      this.reserved.set(taskId, { epoch, unwatch: await this.buses.watch(taskId) });
      return true;
    } catch (error) {
      this.reserved.delete(taskId);
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
    this.cancelBeforeBegin.delete(taskId);
    reservation.unwatch();
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
  }

  /**
   * Changes a task's status from outside a turn (recovery, a sub-task that could not start, a
   * reservation given back): under the task's write lock, `decide` sees the task as stored and
   * returns the status update to apply, or nothing. The update's message joins the history,
   * and the update goes to every stream open on the task. Resolves with the update applied.
   */
  async settle(
    taskId: string,
    context: ServerCallContext,
    decide: (task: Task) => Promise<TaskStatusUpdateEvent | undefined> | TaskStatusUpdateEvent | undefined,
  ): Promise<TaskStatusUpdateEvent | undefined> {
    return this.track(this.settleNow(taskId, context, decide));
  }

  private async settleNow(
    taskId: string,
    context: ServerCallContext,
    decide: (task: Task) => Promise<TaskStatusUpdateEvent | undefined> | TaskStatusUpdateEvent | undefined,
  ) {
    let update: TaskStatusUpdateEvent | undefined;
    let event: AgentExecutionEvent | undefined;
    const stored = await this.options.store.modify(
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

  /** Starts the turn the executor is about to run: on a reserved task, or a new one. */
  async begin(taskId: string, context: ServerCallContext | undefined): Promise<Turn> {
    let reservation = this.reserved.get(taskId);
    this.reserved.delete(taskId);
    // A new task: nobody else knows its id yet, so the lease is free.
    reservation ??= {
      epoch: (await this.options.coordination.acquireTurn(taskId)) ?? 0,
      unwatch: await this.buses.watch(taskId),
    };
    let endWith!: (final: TaskStatusUpdateEvent | undefined) => void;
    const ended = new Promise<TaskStatusUpdateEvent | undefined>((resolve) => (endWith = resolve));
    const turn: RunningTurn = { taskId, abort: new AbortController(), context, ended, endWith, ...reservation };
    this.running.set(taskId, turn);
    this.endedTurns.delete(taskId);
    if (this.draining) turn.abort.abort(new TurnInterrupted());
    else if (this.cancelBeforeBegin.has(taskId)) {
      turn.abort.abort(abortReason(this.cancelBeforeBegin.get(taskId)!));
      this.cancelBeforeBegin.delete(taskId);
    }
    return turn;
  }

  /** The turn running here on the task, if one is. */
  turn(taskId: string): Turn | undefined {
    return this.running.get(taskId);
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
   * Ends the turn: the lease goes first, then the caller publishes `final`, the final status. A
   * reply stored between the two sees the turn's last WORKING state, which the final status replaces.
   */
  async end(turn: Turn, final?: TaskStatusUpdateEvent): Promise<void> {
    const running = this.running.get(turn.taskId);
    if (running !== turn) return;
    this.running.delete(turn.taskId);
    this.endedTurns.set(turn.taskId, running);
    // Never throws: the final status must still go out.
    const retry = {
      stop: () => this.draining,
      onError: (error: unknown) => this.options.onError(error, 'ending a turn (trying again)', turn.taskId),
    };
    try {
      // Tried again until released: a lease left held would refuse every later turn of the task.
      await untilDone(() => this.options.coordination.releaseTurn(turn.taskId), retry);
      // A reply stored on another instance while the lease still held said WORKING: it reaches
      // the turn's streams before the final status does (CMD-8, CMD-9). Each such reply chose
      // its state under the task's row lock, so once the writes under way have committed,
      // reading the task's events catches every one of them.
      await untilDone(() => this.options.store.awaitWritesUnderWay(turn.taskId), retry);
      await this.options.coordination.caughtUp(turn.taskId);
    } catch (error) {
      this.options.onError(error, 'ending a turn', turn.taskId);
    } finally {
      running.unwatch();
      running.endWith(final);
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

  post(
    update: TaskStatusUpdateEvent | DecidedUpdate,
    context: ServerCallContext,
    exchange: { message?: Message } = {},
  ): Promise<Task> {
    return this.track(this.postNow(update, context, exchange));
  }

  private async postNow(
    given: TaskStatusUpdateEvent | DecidedUpdate,
    context: ServerCallContext,
    exchange: { message?: Message },
  ): Promise<Task> {
    let update!: TaskStatusUpdateEvent;
    let event: AgentExecutionEvent | undefined;
    const stored = await this.options.store.modify(
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

  /**
   * Cancels a turn running on another instance: asks it, then waits for the turn's final
   * status to arrive here. Resolves at once when no turn runs elsewhere any more.
   */
  async cancelElsewhere(taskId: string, context: ServerCallContext): Promise<void> {
    const unwatch = await this.buses.watch(taskId);
    const bus = this.buses.createOrGetByTaskId(taskId, context);
    const queue = new ExecutionEventQueue(bus);
    try {
      // Asked after listening starts, and only while the turn still runs, so its end is not missed.
      if (!(await this.options.coordination.turnHeld(taskId))) return;
      await this.options.coordination.requestCancel(taskId);
      // A request is a wake-up, not a record: an instance that did not hear it (its LISTEN
      // connection was down) hears it again, until the turn ends.
      const again = setInterval(() => {
        this.options.coordination
          .requestCancel(taskId)
          .catch((error: unknown) => this.options.onError(error, 'asking for a cancel again', taskId));
      }, CANCEL_AGAIN_MS);
      try {
        for await (const _event of queue.events());
      } finally {
        clearInterval(again);
      }
    } finally {
      queue.stop();
      unwatch();
      this.buses.releaseIfUnused(taskId, context, (id) => this.runsHere(id));
    }
  }

  /**
   * Stops, starting no turn more: turns here end as interrupted, and their streams and the posts
   * under way get up to `graceMs` to be stored; then the coordination closes (not waited for with
   * writes left: the database may hold them). Resolves with the turns and writes left unstored.
   */
  async drain(graceMs = Infinity): Promise<{ turns: number; writes: number }> {
    this.draining = true;
    for (const turn of this.running.values()) turn.abort.abort(new TurnInterrupted());
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

  /**
   * Stops the task's turn, wherever it runs (CMD-32): it ends as a finished turn ends, keeping
   * what it wrote. A request, not a wait: the turn's final status follows on its own.
   */
  async stop(taskId: string): Promise<void> {
    if (this.running.has(taskId) || this.reserved.has(taskId)) return this.cancelHere(taskId, 'stop');
    if (await this.options.coordination.turnHeld(taskId)) await this.options.coordination.requestCancel(taskId, 'stop');
  }

  /** A cancel or stop request from any instance: aborts the turn if it runs here. */
  private cancelHere(taskId: string, how: TurnEnding): void {
    const turn = this.running.get(taskId);
    if (turn) turn.abort.abort(abortReason(how));
    // A cancel asked for already is not made a mere stop.
    else if (this.reserved.has(taskId) && this.cancelBeforeBegin.get(taskId) !== 'cancel')
      this.cancelBeforeBegin.set(taskId, how);
  }
}

function abortReason(how: TurnEnding): Error {
  return how === 'stop' ? new TurnStopped() : new Error('canceled');
}

/** A turn as its stream knows it: `ended` resolves, once it has ended, with its final status. */
export interface EndingTurn extends Turn {
  readonly ended: Promise<TaskStatusUpdateEvent | undefined>;
}

interface RunningTurn extends EndingTurn {
  unwatch: () => void;
  endWith: (final: TaskStatusUpdateEvent | undefined) => void;
}
