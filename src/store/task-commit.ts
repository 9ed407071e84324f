import type { Task } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { Transaction } from 'kysely';
import type { ClaimAcceptance } from '../ports.js';
import { acceptClaimIn } from './claim-acceptance.js';
import type { Database } from './database.js';
import { writePlan, type TaskIdentity } from './plan-writes.js';
import { insertDeliveries } from './push-outbox.js';
import { isEmptyPlan, planSave, type SavePlan } from './save-plan.js';
import type { StoredTask } from './stored-task.js';
import type { TaskScope } from './task-cache.js';
import { insertLogRows } from './task-log.js';
import type { LoggedEvent } from '../ports.js';

/**
 * What one write of a task stores, from the call that asks for it (`TaskWrite`) to the rows it
 * commits (`Commit`). `TaskImages.commit` is the one way a task is written; the statements a
 * commit runs are chosen by its shape: one guarded statement (`one-statement-write.ts`) when it
 * fits, else a transaction (`writeInTransaction`).
 */

/** Writes that go in the transaction of a task's save: a new task's records (`SqlTaskStore.create`). */
export type Alongside = (trx: Transaction<Database>) => Promise<unknown>;

/**
 * How a write accepts the claim of the message it answers, in its transaction: shared, the
 * claim recorded before is accepted (`acceptClaimIn`); alone, it is recorded already accepted
 * (`SqlMessageClaimStore.recordIn`).
 */
export type ClaimWriter = (trx: Transaction<Database>, taskId: string, claim: ClaimAcceptance) => Promise<void>;

/** What a write stores: the task as it becomes, and the events that say how (appended to its log). */
export interface Change {
  task: Task;
  events: readonly AgentExecutionEvent[];
  /** Where the store records claims: the claim of the message this write answers, accepted with it (`ClaimWriter`). */
  claim?: ClaimAcceptance;
}

/**
 * What a write saves, decided from the freshest stored image: a change, or undefined for nothing.
 *
 * Must be pure: no side effects, and the same answer for the same stored task. It may run more
 * than once for one write, and only its last answer is stored: shared (PostgreSQL), a write
 * first decides on the kept image and tries one guarded statement; when another instance wrote
 * the task meanwhile, nothing is written and it decides again on the row as it stands, in the
 * transaction that locks it (and again when another instance stored the same new task first).
 */
export type Decide = (stored: StoredTask | undefined) => Change | undefined | Promise<Change | undefined>;

/** A write as asked for: which task, what to decide on it, and what goes with it. */
export interface TaskWrite {
  taskId: string;
  scope: TaskScope;
  decide: Decide;
  /** Records written in the same transaction (a new task's link or model): both or neither. */
  alongside?: Alongside;
  /**
   * Shared only: the write is a turn's, under its lease's epoch. A row fenced by a greater epoch
   * refuses it (`turn_fenced`): another instance took the task over. Otherwise the row's fence
   * becomes this epoch. A new task has no row to fence: nobody else knows its id.
   */
  fence?: number;
}

/** A write as decided on one stored image: the rows to write, and what they carry. */
export interface Commit {
  identity: TaskIdentity;
  plan: SavePlan;
  logged: LoggedEvent[];
  alongside: Alongside | undefined;
  fence: number | undefined;
  claim: ClaimAcceptance | undefined;
  now: Date;
}

/** After a write: the stored image, whether its `Decide` asked for a save, and the events it logged. */
export interface Written {
  image: StoredTask | undefined;
  saved: boolean;
  logged: LoggedEvent[];
  /** Whether the write owed push deliveries (the task has push configs): the deliverer is woken. */
  pushed?: boolean;
}

/** The write decided on `stored`: its commit, or undefined when `decide` saves nothing. */
export async function planCommit(
  write: TaskWrite,
  stored: StoredTask | undefined,
  now: () => Date,
): Promise<Commit | undefined> {
  const change = await write.decide(stored);
  if (!change) return undefined;
  const { task } = change;
  const after = stored?.generation ?? 0;
  const logged = change.events.map((event, i) => ({ generation: after + i + 1, event }));
  const plan = planSave(stored, task, logged.at(-1)?.generation);
  const identity = { id: write.taskId, contextId: stored?.task.contextId ?? task.contextId, ...write.scope };
  return { identity, plan, logged, alongside: write.alongside, fence: write.fence, claim: change.claim, now: now() };
}

/** Whether the commit writes nothing at all, so no statement need run. */
export function writesNothing(commit: Commit): boolean {
  return isEmptyPlan(commit.plan) && !commit.alongside && !commit.claim;
}

/**
 * Writes the commit's rows in `trx`: the task's rows, its log, what goes alongside, the message
 * claim it accepts (refused, and the transaction undone, when the claim is taken), and the push
 * deliveries owed (skipped when `mayOwePush` says the task has no config). Resolves with
 * whether any delivery was owed.
 */
export async function writeInTransaction(
  trx: Transaction<Database>,
  commit: Commit,
  mayOwePush: boolean,
  acceptClaim: ClaimWriter = acceptClaimIn,
): Promise<boolean> {
  const { identity, plan, logged, now } = commit;
  await writePlan(trx, identity, plan, now.toISOString(), commit.fence);
  await insertLogRows(trx, identity.id, logged, now.getTime());
  await commit.alongside?.(trx);
  if (commit.claim) await acceptClaim(trx, identity.id, commit.claim);
  return mayOwePush && (await insertDeliveries(trx, identity.id, logged));
}
