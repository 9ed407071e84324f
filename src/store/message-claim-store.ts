import { TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { Kysely } from 'kysely';
import type { ClaimOutcome, ClaimScope, MessageClaimStore, StoredClaim } from '../commands/message-claim-store.js';
import type { Database } from './database.js';
import { QueryTemplate } from './query-template.js';

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
    /**
     * `shared`: other instances use the database (PostgreSQL), so a claim is recorded before its
     * message is processed, and its unique key keeps two instances from processing one id. Alone
     * (SQLite), see `accept`.
     */
    private readonly options: { shared: boolean } = { shared: true },
  ) {}

  async claim(scope: ClaimScope, messageId: string, digest: string): Promise<StoredClaim | undefined> {
    const key = { tenant: scope.tenant, owner: scope.owner, message_id: messageId };
    if (!this.options.shared) return this.acceptedClaim(key);
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
        eb
          .exists(
            eb.selectFrom('instances').select('instances.id').whereRef('instances.id', '=', 'message_claims.claimant'),
          )
          .as('claimant_alive'),
      ])
      .where('tenant', '=', key.tenant)
      .where('owner', '=', key.owner)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    const accepted = row && acceptedOutcome(row);
    if (accepted) return accepted;
    if (row && row.claimant !== null && row.claimant !== this.claimant && Boolean(row.claimant_alive))
      return { digest: row.digest, pending: true };
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

  /** Alone: the accepted claim of the id, if any; a record never accepted is free to take. */
  private async acceptedClaim(key: {
    tenant: string;
    owner: string;
    message_id: string;
  }): Promise<StoredClaim | undefined> {
    const { rows } = await READ_CLAIM.run(this.db, [key.tenant, key.owner, key.message_id]);
    return rows[0] && acceptedOutcome(rows[0]);
  }

  /**
   * Alone, nothing else can claim the id meanwhile (`MessageClaims` keeps concurrent sends of one
   * id apart in this process), so the claim is recorded only here, already accepted: one write
   * per message instead of two. A message cut short by a crash leaves no record, which is what a
   * record never accepted amounts to (the next send of its id takes it over).
   */
  async accept(scope: ClaimScope, messageId: string, digest: string, outcome: ClaimOutcome): Promise<void> {
    const accepted = {
      task_id: outcome.taskId,
      reply_json: outcome.reply ? JSON.stringify(TaskStatusUpdateEvent.toJSON(outcome.reply)) : null,
    };
    if (this.options.shared)
      await ACCEPT_CLAIMED.run(this.db, [scope.tenant, scope.owner, messageId, accepted.task_id, accepted.reply_json]);
    else
      await RECORD_ACCEPTED.run(this.db, [
        scope.tenant,
        scope.owner,
        messageId,
        digest,
        this.claimant,
        accepted.task_id,
        accepted.reply_json,
      ]);
  }

  async release(scope: ClaimScope, messageId: string): Promise<void> {
    if (!this.options.shared) return; // nothing is recorded before `accept`
    await this.db
      .deleteFrom('message_claims')
      .where('tenant', '=', scope.tenant)
      .where('owner', '=', scope.owner)
      .where('message_id', '=', messageId)
      .where('task_id', 'is', null)
      .execute();
  }
}

/** The claim of (tenant, owner, message id), as `acceptedOutcome` reads it. */
const READ_CLAIM = new QueryTemplate<Database, readonly [string, string, string], ClaimRow>(
  3,
  (db, tenant, owner, messageId) =>
    db
      .selectFrom('message_claims')
      .select(['digest', 'task_id', 'reply_json'])
      .where('tenant', '=', tenant)
      .where('owner', '=', owner)
      .where('message_id', '=', messageId),
);

/** Shared: the claim recorded by `claim` gets its outcome (task id, reply), unless it has one. */
const ACCEPT_CLAIMED = new QueryTemplate<Database, readonly [string, string, string, string, string | null]>(
  5,
  (db, tenant, owner, messageId, taskId, replyJson) =>
    db
      .updateTable('message_claims')
      .set({ task_id: taskId, reply_json: replyJson })
      .where('tenant', '=', tenant)
      .where('owner', '=', owner)
      .where('message_id', '=', messageId)
      .where('task_id', 'is', null),
);

/** Alone: the claim is recorded with its outcome, over a record never accepted (an earlier process's). */
const RECORD_ACCEPTED = new QueryTemplate<
  Database,
  readonly [string, string, string, string, string, string, string | null]
>(7, (db, tenant, owner, messageId, digest, claimant, taskId, replyJson) =>
  db
    .insertInto('message_claims')
    .values({ tenant, owner, message_id: messageId, digest, claimant, task_id: taskId, reply_json: replyJson })
    .onConflict((oc) =>
      oc
        .columns(['tenant', 'owner', 'message_id'])
        .doUpdateSet((eb) => ({
          digest: eb.ref('excluded.digest'),
          claimant: eb.ref('excluded.claimant'),
          task_id: eb.ref('excluded.task_id'),
          reply_json: eb.ref('excluded.reply_json'),
        }))
        .where('message_claims.task_id', 'is', null),
    ),
);

interface ClaimRow {
  digest: string;
  task_id: string | null;
  reply_json: string | null;
}

/** A claim row read back: its outcome once accepted, else undefined. */
function acceptedOutcome(row: ClaimRow): StoredClaim | undefined {
  if (row.task_id === null) return undefined;
  const reply = row.reply_json === null ? undefined : TaskStatusUpdateEvent.fromJSON(JSON.parse(row.reply_json));
  return { digest: row.digest, outcome: { taskId: row.task_id, reply } };
}
