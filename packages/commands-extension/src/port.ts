import type { Message, Task, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { ClaimKey } from './message-claim-store.js';

/**
 * All the Commands extension needs of the server it is mounted on, besides the request handler
 * it wraps: whether a task is busy, and a way to post a reply on a task. The harness's task
 * engine implements it for any number of instances; `sdkTaskPort` implements it over a bare
 * `DefaultRequestHandler`'s task store and event buses.
 */
export interface CommandTaskPort {
  /** Whether a turn is starting or running on the task (CMD-9). */
  isBusy(taskId: string, context: ServerCallContext): Promise<boolean>;
  /** Stores a new task, before its first command runs (CMD-10). */
  create(task: Task, context: ServerCallContext): Promise<void>;
  /**
   * Records a command exchange, or a note, on a task as one write, in order with the task's
   * other writes: `exchange.message` (the command) joins the history unless it is there, then
   * `update`, a status update that leaves the task's state as it is (CMD-4, CMD-6), WORKING
   * while a turn is starting or running, which keeps that turn's streams open (CMD-9). The
   * state used is set on `update.status.state`. The update then goes to every stream open on
   * the task (CMD-8). `exchange.records` (and a decided update's records) join the history in
   * the same write, after the command and before the reply. Resolves with the task as stored
   * after the update.
   *
   * `exchange.claim` is given only to a port that `recordsClaims`: the command message's claim,
   * recorded accepted (the task's id, and `update` as stored) in the same write as the reply, or
   * the write refused when the claim is no longer there to accept (another server took the
   * message over).
   */
  post(
    update: TaskStatusUpdateEvent | DecidedUpdate,
    context: ServerCallContext,
    exchange?: { message?: Message; records?: Message[]; claim?: ClaimKey },
  ): Promise<Task>;
  /**
   * Whether `post` records the message's claim with the reply, in the claims' own store (one
   * database holds both): one write instead of two. Otherwise the runner records it after `post`.
   */
  readonly recordsClaims?: boolean;
}

/**
 * An update decided from the task as stored, with the command already in its history, in the
 * same step as it is stored: under the task's write lock, so that two commands sent at once
 * each see the other's reply (the first `/approve` or `/deny` of a call wins). `decide` must not
 * change the task, and should be quick: it holds the lock. It may run more than once for one
 * update (a store shared by several servers decides again when another one wrote the task
 * first), and only its last answer is stored: so it answers from the task it is given alone,
 * with no side effect an earlier run would leave behind.
 */
export interface DecidedUpdate {
  taskId: string;
  decide: (task: Task) => Promise<DecidedReply>;
}

/** What a `DecidedUpdate` decided: the reply, and the records stored with it (`CommandResult.records`). */
export interface DecidedReply {
  update: TaskStatusUpdateEvent;
  records?: Message[];
}
