import { TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { Kysely } from 'kysely';
import type { ClaimOutcome, ClaimScope, MessageClaimStore, StoredClaim } from '../commands/message-claim-store.js';
import type { Database } from './database.js';

/**
 * The durable `MessageClaimStore` (CMD-13, CMD-34): a message resent with the same `messageId`
 * after a restart still gets what it went to instead of running again. The table's primary key
 * (tenant, owner, message id) is what makes a claim atomic. Replies are stored with the SDK's
 * codec, so the state enum and any raw bytes in the reply message read back as they were.
 */
export class SqlMessageClaimStore implements MessageClaimStore {
  constructor(
    private readonly db: Kysely<Database>,
    /**
     * This instance's id (`Coordination.instanceId`), recorded with each claim it makes. Another
     * instance finding an unaccepted claim leaves it alone while its claimant still has a row
     * in `instances` (is alive, when instances share PostgreSQL), and takes it over otherwise.
     */
    private readonly claimant: string,
  ) {}

  async claim(scope: ClaimScope, messageId: string, digest: string): Promise<StoredClaim | undefined> {
    const key = { tenant: scope.tenant, owner: scope.owner, message_id: messageId };
    const inserted = await this.db
      .insertInto('message_claims')
      .values({ ...key, digest, task_id: null, reply_json: null, claimant: this.claimant })
      .onConflict((oc) => oc.columns(['tenant', 'owner', 'message_id']).doNothing())
      .returning('message_id')
      .executeTakeFirst();
    if (inserted) return undefined;
    const row = await this.db
      .selectFrom('message_claims')
      .select((eb) => [
        'digest',
        'task_id',
        'reply_json',
        'claimant',
        eb.exists(eb.selectFrom('instances').select('instances.id').whereRef('instances.id', '=', 'message_claims.claimant')).as('claimant_alive'),
      ])
      .where('tenant', '=', key.tenant)
      .where('owner', '=', key.owner)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    if (row?.task_id != null) {
      const reply = row.reply_json === null ? undefined : TaskStatusUpdateEvent.fromJSON(JSON.parse(row.reply_json));
      return { digest: row.digest, outcome: { taskId: row.task_id, reply } };
    }
    if (row && row.claimant !== null && row.claimant !== this.claimant && Boolean(row.claimant_alive)) return { digest: row.digest, pending: true };
    // Never accepted (its message was cut short): this claim takes its place.
    await this.db
      .updateTable('message_claims')
      .set({ digest, claimant: this.claimant })
      .where('tenant', '=', key.tenant)
      .where('owner', '=', key.owner)
      .where('message_id', '=', messageId)
      .where('task_id', 'is', null)
      .execute();
    return undefined;
  }

  async accept(scope: ClaimScope, messageId: string, outcome: ClaimOutcome): Promise<void> {
    await this.db
      .updateTable('message_claims')
      .set({ task_id: outcome.taskId, reply_json: outcome.reply ? JSON.stringify(TaskStatusUpdateEvent.toJSON(outcome.reply)) : null })
      .where('tenant', '=', scope.tenant)
      .where('owner', '=', scope.owner)
      .where('message_id', '=', messageId)
      .where('task_id', 'is', null)
      .execute();
  }

  async release(scope: ClaimScope, messageId: string): Promise<void> {
    await this.db
      .deleteFrom('message_claims')
      .where('tenant', '=', scope.tenant)
      .where('owner', '=', scope.owner)
      .where('message_id', '=', messageId)
      .where('task_id', 'is', null)
      .execute();
  }
}
