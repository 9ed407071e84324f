import type { ServerCallContext } from '@a2a-js/sdk/server';

/** The abort reason of a turn stopped by a server shutdown rather than by `CancelTask`. */
export class TurnInterrupted extends Error {
  constructor() {
    super('The server is shutting down.');
    this.name = 'TurnInterrupted';
  }
}

/** One model turn in flight on a task, on this instance (see `TaskEngine`). */
export interface Turn {
  readonly taskId: string;
  /** Aborted by `CancelTask` (from any instance) or a shutdown; the model request listens to it. */
  readonly abort: AbortController;
  /** The context of the request that started the turn (the executor's cancel path gets none). */
  readonly context: ServerCallContext | undefined;
}
