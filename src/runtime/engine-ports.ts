/**
 * What the engine (`engine.ts`) shares with the parts it is built from (writes, cancels, the
 * turn stream) and with what starts turns through it (queued messages, command turns,
 * approvals): declared here, so that none of them imports the engine itself.
 */
import type { Message, Task, TaskState } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';
import type { StartedTurn, Turn, TurnOptions } from './turn/turns.js';
import type { Appended, Coordination, TaskEdit, TaskSnapshot, TurnWrite } from '../ports.js';

/** What the engine reads and writes tasks through: the store, every write an append to the task's log. */
export interface EngineStore {
  read(taskId: string, context: ServerCallContext): Promise<TaskSnapshot | undefined>;
  load(taskId: string, context: ServerCallContext): Promise<Task | undefined>;
  create(task: Task, context: ServerCallContext): Promise<Appended>;
  append(
    taskId: string,
    context: ServerCallContext,
    events: readonly AgentExecutionEvent[],
    turn?: TurnWrite,
  ): Promise<Appended>;
  /** `decide` must be pure: it may run more than once for one write, and only its last answer is stored. */
  modify(
    taskId: string,
    context: ServerCallContext,
    decide: (task: Task) => Promise<TaskEdit | undefined> | TaskEdit | undefined,
  ): Promise<Appended | undefined>;
  /** Whether `modify` accepts the message claim an edit carries (`TaskEdit.claim`), in the claims' own table. */
  readonly recordsClaims?: boolean;
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

/** What starts or stops turns through the engine, without the rest of it. */
export interface TurnStarter {
  readonly coordination: Coordination;
  /** Whether a turn is starting or running on the task, on any instance. */
  isBusy(taskId: string): Promise<boolean>;
  startTurn(message: Message, context: ServerCallContext, options?: TurnOptions): Promise<StartedTurn>;
  /** `/stop` (CMD-32), wherever the turn runs. */
  stop(taskId: string): Promise<void>;
}

/** A turn running here, as the engine keeps it. */
export interface RunningTurn extends Turn {
  readonly context: ServerCallContext;
  /** Resolves once the turn has ended and its end is stored (or could not be). */
  done: Promise<void>;
  /** A write was refused because another instance took the task over: nothing more of the turn is stored. */
  fenced?: boolean;
}
