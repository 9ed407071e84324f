import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { ActiveTurns } from '../commands/index.js';

/** The abort reason of a turn stopped by a server shutdown rather than by `CancelTask`. */
export class TurnInterrupted extends Error {
  constructor() {
    super('The server is shutting down.');
    this.name = 'TurnInterrupted';
  }
}

/** One model turn in flight on a task. */
export interface Turn {
  readonly taskId: string;
  /** Aborted by `CancelTask`; the model request listens to it. */
  readonly abort: AbortController;
  /** The context of the request that started the turn (the executor's cancel path gets none). */
  readonly context: ServerCallContext | undefined;
}

/**
 * Which tasks have a model turn in flight, in this process. A turn is reserved the moment a
 * message is accepted (before the SDK has even loaded the task), begins when the executor
 * starts, and ends in the same tick as its final status is published, so that a command
 * arriving at any point sees the truth (CMD-9). Only live work is here: everything durable is
 * in the store.
 */
export class TurnRegistry implements ActiveTurns {
  private readonly reserved = new Set<string>();
  private readonly running = new Map<string, Turn>();

  isActive(taskId: string): boolean {
    return this.reserved.has(taskId) || this.running.has(taskId);
  }

  /** Claims the task for one turn; false when a turn is already reserved or running there. */
  reserve(taskId: string): boolean {
    if (this.isActive(taskId)) return false;
    this.reserved.add(taskId);
    return true;
  }

  /** Drops a reservation whose turn never began (the request was refused before the executor ran). */
  release(taskId: string): void {
    if (!this.running.has(taskId)) this.reserved.delete(taskId);
  }

  /** Starts the turn the executor is about to run. */
  begin(taskId: string, context: ServerCallContext | undefined): Turn {
    this.reserved.delete(taskId);
    const turn: Turn = { taskId, abort: new AbortController(), context };
    this.running.set(taskId, turn);
    return turn;
  }

  /** Ends the turn; call in the same tick as publishing its final status. */
  end(turn: Turn): void {
    if (this.running.get(turn.taskId) === turn) this.running.delete(turn.taskId);
  }

  get(taskId: string): Turn | undefined {
    return this.running.get(taskId);
  }

  /** The number of turns running now. */
  get size(): number {
    return this.running.size;
  }

  /** Aborts every running turn because the server is stopping: they end as interrupted, not canceled. */
  interruptAll(): void {
    for (const turn of this.running.values()) turn.abort.abort(new TurnInterrupted());
  }
}
