import { sql, type RawBuilder, type Transaction } from 'kysely';
import { HarnessError } from '../errors.js';
import type { ClaimAcceptance } from '../ports.js';
import type { Database } from './database.js';
import { encodeClaimReply } from './message-claim-store.js';

/** The SQLSTATE of `write_refused` (migration 0020): the one statement undone as a whole. */
export const WRITE_REFUSED = 'TH409';

/**
 * The one statement's CTE `c` accepting the claim, after the task row's update `upd` and only
 * when it wrote: the statement's result must then check that `c` accepted it (`refusedUnlessClaimed`).
 */
export function acceptClaimAfter(taskId: string, claim: ClaimAcceptance): RawBuilder<unknown> {
  return sql`c as (update message_claims set task_id = ${taskId}, reply_json = ${encodeClaimReply(claim.reply)}
    where exists (select 1 from upd) and ${claimKey(claim)} and task_id is null returning 1)`;
}

/** A guard for `upd`: the claim is still open, as the statement's snapshot sees it. */
export function claimOpen(claim: ClaimAcceptance): RawBuilder<unknown> {
  return sql` and exists (select 1 from message_claims where ${claimKey(claim)} and task_id is null)`;
}

/**
 * The statement's undoing when the task was written and the claim not accepted (another
 * instance accepted it after the snapshot): `write_refused` raises, and nothing stays written.
 */
export function refusedUnlessClaimed(): RawBuilder<unknown> {
  return sql`case when count(*) > (select count(*) from c) then write_refused('message claim taken') else 0 end`;
}

/** In a write's transaction: the claim accepted, or the transaction undone when it is no longer open. */
export async function acceptClaimIn(trx: Transaction<Database>, taskId: string, claim: ClaimAcceptance): Promise<void> {
  const accepted = await trx
    .updateTable('message_claims')
    .set({ task_id: taskId, reply_json: encodeClaimReply(claim.reply) })
    .where('tenant', '=', claim.tenant)
    .where('owner', '=', claim.owner)
    .where('message_id', '=', claim.messageId)
    .where('digest', '=', claim.digest)
    .where('task_id', 'is', null)
    .executeTakeFirst();
  if (Number(accepted.numUpdatedRows) === 0) throw claimTaken(claim.messageId);
}

/** A write refused because its message's claim was accepted elsewhere first (or is gone). */
export function claimTaken(messageId: string): HarnessError {
  return new HarnessError(
    'store_failed',
    `Message ${messageId} was answered by another instance of the server meanwhile; this answer was not stored. Send the message again, unchanged, for its answer.`,
  );
}

function claimKey(claim: ClaimAcceptance): RawBuilder<unknown> {
  return sql`tenant = ${claim.tenant} and owner = ${claim.owner} and message_id = ${claim.messageId} and digest = ${claim.digest}`;
}
