import type { Message, StreamResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * The abort reason of a turn ended by `CancelTask` (CMD-31): the turn ends CANCELED, a status
 * the engine stores and publishes itself (`TaskEngine.end`).
 */
export class TurnCanceled extends Error {
  constructor() {
    super('The task was canceled.');
    this.name = 'TurnCanceled';
  }
}

/** The abort reason of a turn stopped by a server shutdown rather than by `CancelTask`. */
export class TurnInterrupted extends Error {
  constructor() {
    super('The server is shutting down.');
    this.name = 'TurnInterrupted';
  }
}

/**
 * The abort reason of a turn whose events could not be stored (the database connection was
 * lost): it ends saying so, and the engine stores that end itself (`TaskEngine.endUnwritten`).
 */
export class TurnUnwritten extends Error {
  constructor() {
    super('The turn could not be stored.');
    this.name = 'TurnUnwritten';
  }
}

/**
 * The abort reason of a turn ended by `/stop` (CMD-32): the turn ends as a finished turn does,
 * its partial reply kept, rather than canceling the task.
 */
export class TurnStopped extends Error {
  constructor() {
    super('The turn was stopped.');
    this.name = 'TurnStopped';
  }
}

/**
 * The abort reason of a turn fenced off its task: another instance took the task over while
 * this one stalled past its lease, and the store refused the turn's write (`turn_fenced`). The
 * turn stops and writes nothing more, not even a final status: the task is the other's now.
 */
export class TurnFenced extends Error {
  constructor() {
    super('Another instance took the task over.');
    this.name = 'TurnFenced';
  }
}

/** One model turn in flight on a task, on this instance (see `TaskEngine`). */
export interface Turn {
  readonly taskId: string;
  /** Its lease's epoch (`Coordination.acquireTurn`): every write of the turn is checked against it. */
  readonly epoch: number;
  /**
   * Aborted only by `TaskEngine.abortTurn` (cancel, stop, shutdown, a failed or fenced stream),
   * its reason one of the errors above; the model request listens to it.
   */
  readonly abort: AbortController;
  /** The context of the request that started the turn, if the SDK gave one: its scope is where a canceled turn's end is stored. */
  readonly context: ServerCallContext | undefined;
}

/** Why a turn is aborted: the one reason `TaskEngine.abortTurn` takes. */
export type TurnAbortReason = TurnCanceled | TurnStopped | TurnInterrupted | TurnUnwritten | TurnFenced;

/** A turn as its caller sees it, once started: its task and its events. */
export interface StartedTurn {
  taskId: string;
  /**
   * The turn's events as its task's log holds them, from the turn's task event to its final
   * status, with every other event of the task in between (command replies, CMD-8). Ends early
   * with the turn's error when its final status could not be stored. Read it once.
   */
  events: AsyncGenerator<StreamResponse, void, undefined>;
  /** Resolves once the turn has ended and its end is stored (or could not be); never rejects. */
  done: Promise<void>;
  /** For a caller that does not read `events`: lets go of them (the turn runs on). */
  detach(): void;
}

/** What starting a turn takes besides its message. */
export interface TurnOptions {
  /** A turn resumed after `/approve` or `/deny`: counted under the limit, never refused by it. */
  pastLimit?: boolean;
  /**
   * Called with the turn's task id once the turn holds the task's lease, before anything of the
   * turn is stored (a new task's id is known to nobody else yet): `SendMessage`'s push config.
   */
  beforeTurn?: (taskId: string) => Promise<void>;
  /**
   * The id a new task takes (a message naming no task): a scheduled run's, chosen with its claim,
   * so that a run whose task exists is known to have begun (`runtime/schedules/`).
   */
  newTaskId?: string;
  /** The task's lease, taken already by the caller (a queued message's turn): given back if the turn cannot start. */
  heldEpoch?: number;
  /** A message sent to its task: refused as busy (`turn_in_progress`) while messages wait in the task's queue too. */
  unlessQueued?: boolean;
  /**
   * A2A 1.1's `ifGenerationMatch`: the generation the task must be at, checked on the task as
   * read and again once the turn holds its lease (no other turn writes then); otherwise refused
   * (`task_generation_mismatch`). Ignored for a new task, as the draft says.
   */
  ifGeneration?: number;
  /**
   * Messages stored before the turn's message, in its opening write, decided on the task as the
   * turn reads it (none for a new task): a `rollback` message's rewind mark.
   */
  opening?: (task: Task | undefined) => Message[];
}
