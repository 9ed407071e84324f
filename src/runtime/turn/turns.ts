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

/** Why a turn is aborted: the one reason `TaskEngine.abortTurn` takes. */
export type TurnAbortReason = TurnCanceled | TurnStopped | TurnInterrupted | TurnUnwritten | TurnFenced;
