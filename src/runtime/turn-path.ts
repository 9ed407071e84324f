import type { AgentCard } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  type A2ARequestHandler,
  type AgentExecutor,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import type { MessageClaims } from '../commands/index.js';
import { BlockingSendAsStream } from './blocking-send.js';
import type { TaskEngine } from './engine.js';
import { MessageIdempotency } from './message-idempotency.js';
import { SingleTurnGuard } from './single-turn-guard.js';
import { Subscriptions } from './subscriptions.js';
import { TaskCancellation } from './task-cancellation.js';
import type { TaskStateStore } from './task-state.js';
import { TrackedTurns } from './tracked-turns.js';
import type { TurnLimit } from './turn-limit.js';

export interface TurnPathOptions {
  engine: TaskEngine;
  executor: AgentExecutor;
  /** The task store every part reads and writes tasks through (the harness's view). */
  taskStore: TaskStore;
  /** The card the SDK's handler checks capabilities against. */
  card: AgentCard;
  /** The record of handled message ids, shared with the commands extension (CMD-34). */
  claims: MessageClaims;
  links: Pick<TaskStateStore, 'getLinks'>;
  /** The most turns in flight here; every turn, the harness's own included, takes a place. None: no bound. */
  limit?: TurnLimit;
  onChildCancelError: (error: unknown, childId: string) => void;
  onClaimError: (error: unknown, taskId: string) => void;
  onStreamError: (error: unknown) => void;
  /** Told of each failed try to store the end of a turn whose stream could not store it. */
  onTurnEndError: (error: unknown, what: string, taskId: string) => void;
}

export interface TurnPath {
  /** Everything that is not a command: what the commands extension wraps. */
  handler: A2ARequestHandler;
  /** Where the harness starts turns of its own (sub-tasks): one turn per task, no message claims (the ids are the harness's own). */
  harnessTurns: A2ARequestHandler;
  /** As `harnessTurns`, for a turn resumed after `/approve`: counted under the limit, never refused by it (`TurnLimit.takePastLimit`). */
  resumedTurns: A2ARequestHandler;
}

/**
 * The request path of everything that is not a command, in one place, outermost first:
 * - `BlockingSendAsStream`: every send runs as a stream (cheaper, and a shutdown can wait for it);
 * - `MessageIdempotency`: a message id is handled once per user (CMD-34);
 * - `Subscriptions`: `SubscribeToTask` from the engine's buses, across instances (CMD-8);
 * - `SingleTurnGuard`: one turn per task, across instances, and at most `limit` here, refused clearly otherwise;
 * - `TaskCancellation`: `CancelTask` wherever the turn runs, cascading to sub-tasks (CMD-31);
 * - `TrackedTurns`: a turn's stream is work under way until stored, for `drain`;
 * - the SDK's `DefaultRequestHandler`, on the engine's buses, running the executor.
 */
export function buildTurnPath(options: TurnPathOptions): TurnPath {
  const { engine, taskStore, limit } = options;
  const sdk = new DefaultRequestHandler(options.card, taskStore, options.executor, engine.buses);
  const cancellable = new TaskCancellation(
    new TrackedTurns(sdk, engine, options.onTurnEndError),
    engine,
    options.links,
    options.onChildCancelError,
  );
  const visible = async (id: string, context: ServerCallContext) => (await taskStore.load(id, context)) !== undefined;
  const guarded = new SingleTurnGuard(cancellable, engine, visible, limit);
  const resumed = new SingleTurnGuard(cancellable, engine, visible, limit && { take: () => limit.takePastLimit() });
  const handler = new BlockingSendAsStream(
    new MessageIdempotency(new Subscriptions(guarded, { taskStore, engine }), {
      claims: options.claims,
      taskStore,
      engine,
      onClaimError: options.onClaimError,
    }),
    options.onStreamError,
  );
  return { handler, harnessTurns: guarded, resumedTurns: resumed };
}
