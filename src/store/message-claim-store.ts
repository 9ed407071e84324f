import { TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { Kysely } from 'kysely';
import type { ClaimOutcome, ClaimScope, MessageClaimStore, StoredClaim } from '../a2a/index.js';
import type { ClaimAcceptance } from '../ports.js';
import type { Database } from './database.js';
import { QueryTemplate } from './query-template.js';
import { writeTogether } from './reads-together.js';

export interface SqlMessageClaimStoreOptions {
  /**
   * `shared`: other instances use the database (PostgreSQL), so a claim is recorded before its
   * message is processed, and its unique key keeps two instances from processing one message.
   * Alone (SQLite), see `accept` and `recordIn`.
   */
  shared: boolean;
  /**
   * The clock claims are dated and pruned by, in ms since the epoch (default `Date.now`). Each
   * instance's own: a few seconds between instances' clocks matter nothing against a retention
   * of hours, and tests can move it.
   */
  now?: () => number;
}

/**
 * The durable `MessageClaimStore` (CMD-13, CMD-34): a message resent unchanged after a restart
 * still gets what it went to instead of running again. The table's primary key (tenant, owner,
 * message id, content digest) is what makes a claim atomic, and lets one id carry several
 * messages. Replies are stored with the SDK's codec, so the state enum and any raw bytes in the
 * reply message read back as they were. Records are dated, and `prune` removes old ones.
 */
export class SqlMessageClaimStore implements MessageClaimStore {
  private readonly now: () => number;

  constructor(
    private readonly db: Kysely<Database>,
    /**
     * This instance's id (`Coordination.instanceId`), recorded with each claim it makes. Another
     * instance finding an unaccepted claim leaves it alone while its claimant still has a row
     * in `instances` (is alive, when instances share PostgreSQL), and takes it over otherwise.
     */
    private readonly claimant: string,
    private readonly options: SqlMessageClaimStoreOptions = { shared: true },
  ) {
    this.now = options.now ?? Date.now;
  }

  async claim(scope: ClaimScope, messageId: string, digest: string): Promise<StoredClaim> {
    const key = { tenant: scope.tenant, owner: scope.owner, message_id: messageId, digest };
    if (!this.options.shared) return this.readClaim(key);
    // Sent with the reads sent meanwhile (the task the message names): one statement on PostgreSQL.
    const [inserted] = await writeTogether(
      this.db,
      RECORD_CLAIM.compile(this.db, [scope.tenant, scope.owner, messageId, digest, this.claimant, this.now()]),
    );
    if (inserted) return { kind: 'new', idReused: Boolean(inserted.id_reused) };
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
      .where('digest', '=', digest)
      .executeTakeFirst();
    const accepted = row && acceptedOutcome(row);
    if (accepted) return { kind: 'accepted', outcome: accepted };
    if (row && row.claimant !== null && row.claimant !== this.claimant && Boolean(row.claimant_alive))
      return { kind: 'pending' };
    // Never accepted (its message was cut short): this claim takes its place.
    await this.db
      .updateTable('message_claims')
      .set({ claimant: this.claimant, created_ms: this.now() })
      .where('tenant', '=', key.tenant)
      .where('owner', '=', key.owner)
      .where('message_id', '=', messageId)
      .where('digest', '=', digest)
      .where('task_id', 'is', null)
      .execute();
    return { kind: 'new', idReused: false };
  }

  /** Alone: the message's accepted claim, if any; a record never accepted is free to take. */
  private async readClaim(key: { tenant: string; owner: string; message_id: string; digest: string }) {
    const { rows } = await READ_CLAIMS.run(this.db, [key.tenant, key.owner, key.message_id]);
    const same = rows.find((row) => row.digest === key.digest);
    const outcome = same && acceptedOutcome(same);
    if (outcome) return { kind: 'accepted', outcome } satisfies StoredClaim;
    return { kind: 'new', idReused: rows.some((row) => row.digest !== key.digest) } satisfies StoredClaim;
  }

  /**
   * Alone, nothing else can claim the message meanwhile (`MessageClaims` keeps concurrent sends
   * of one apart in this process), so the claim is recorded only here, already accepted: one
   * write per message instead of two. A message cut short by a crash leaves no record, which is
   * what a record never accepted amounts to (the next send of it takes it over).
   */
  async accept(scope: ClaimScope, messageId: string, digest: string, outcome: ClaimOutcome): Promise<void> {
    const taskId = outcome.taskId;
    const replyJson = encodeClaimReply(outcome.reply);
    if (this.options.shared)
      await ACCEPT_CLAIMED.run(this.db, [scope.tenant, scope.owner, messageId, digest, taskId, replyJson]);
    else
      await RECORD_ACCEPTED.run(this.db, [
        scope.tenant,
        scope.owner,
        messageId,
        digest,
        this.claimant,
        taskId,
        replyJson,
        this.now(),
      ]);
  }

  /**
   * Alone: the claim recorded as `accept` records it, in the transaction of the write that
   * stores the message's reply (`SqlTaskStoreOptions.recordClaim`): one commit, not two.
   */
  async recordIn(trx: Kysely<Database>, taskId: string, claim: ClaimAcceptance): Promise<void> {
    const { tenant, owner, messageId, digest } = claim;
    const replyJson = encodeClaimReply(claim.reply);
    await RECORD_ACCEPTED.run(trx, [tenant, owner, messageId, digest, this.claimant, taskId, replyJson, this.now()]);
  }

  async release(scope: ClaimScope, messageId: string, digest: string): Promise<void> {
    if (!this.options.shared) return; // nothing is recorded before `accept`
    await this.db
      .deleteFrom('message_claims')
      .where('tenant', '=', scope.tenant)
      .where('owner', '=', scope.owner)
      .where('message_id', '=', messageId)
      .where('digest', '=', digest)
      .where('task_id', 'is', null)
      .execute();
  }

  /**
   * Removes at most `limit` claims made more than `retentionMs` ago, oldest first (a bounded
   * statement, however many have expired); returns how many went.
   */
  async prune(retentionMs: number, limit: number): Promise<number> {
    const result = await this.db
      .deleteFrom('message_claims')
      .where((eb) =>
        eb(
          eb.refTuple('tenant', 'owner', 'message_id', 'digest'),
          'in',
          eb
            .selectFrom('message_claims as old')
            .select(['old.tenant', 'old.owner', 'old.message_id', 'old.digest'])
            .where('old.created_ms', '<', this.now() - retentionMs)
            .orderBy('old.created_ms')
            .limit(limit)
            .$asTuple('tenant', 'owner', 'message_id', 'digest'),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/**
 * Shared: the claim recorded, unless a record of the message is there already (then no row
 * comes back); `id_reused` when the id was claimed with other content. Every message runs it.
 */
const RECORD_CLAIM = new QueryTemplate<
  Database,
  readonly [string, string, string, string, string, number],
  { id_reused: unknown }
>(6, (db, tenant, owner, messageId, digest, claimant, createdMs) =>
  db
    .insertInto('message_claims')
    .values({
      tenant,
      owner,
      message_id: messageId,
      digest,
      task_id: null,
      reply_json: null,
      claimant,
      created_ms: createdMs,
    })
    .onConflict((oc) => oc.columns(['tenant', 'owner', 'message_id', 'digest']).doNothing())
    // The subquery sees the table as it was before this row went in.
    .returning((eb) =>
      eb
        .exists(
          eb
            .selectFrom('message_claims as other')
            .select('other.digest')
            .where('other.tenant', '=', tenant)
            .where('other.owner', '=', owner)
            .where('other.message_id', '=', messageId)
            .where('other.digest', '<>', digest),
        )
        .as('id_reused'),
    ),
);

/** Every claim of (tenant, owner, message id): one per content sent with that id. */
const READ_CLAIMS = new QueryTemplate<Database, readonly [string, string, string], ClaimRow>(
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
const ACCEPT_CLAIMED = new QueryTemplate<Database, readonly [string, string, string, string, string, string | null]>(
  6,
  (db, tenant, owner, messageId, digest, taskId, replyJson) =>
    db
      .updateTable('message_claims')
      .set({ task_id: taskId, reply_json: replyJson })
      .where('tenant', '=', tenant)
      .where('owner', '=', owner)
      .where('message_id', '=', messageId)
      .where('digest', '=', digest)
      .where('task_id', 'is', null),
);

/** Alone: the claim is recorded with its outcome, over a record never accepted (an earlier process's). */
const RECORD_ACCEPTED = new QueryTemplate<
  Database,
  readonly [string, string, string, string, string, string, string | null, number]
>(8, (db, tenant, owner, messageId, digest, claimant, taskId, replyJson, createdMs) =>
  db
    .insertInto('message_claims')
    .values({
      tenant,
      owner,
      message_id: messageId,
      digest,
      claimant,
      task_id: taskId,
      reply_json: replyJson,
      created_ms: createdMs,
    })
    .onConflict((oc) =>
      oc
        .columns(['tenant', 'owner', 'message_id', 'digest'])
        .doUpdateSet((eb) => ({
          claimant: eb.ref('excluded.claimant'),
          task_id: eb.ref('excluded.task_id'),
          reply_json: eb.ref('excluded.reply_json'),
          created_ms: eb.ref('excluded.created_ms'),
        }))
        .where('message_claims.task_id', 'is', null),
    ),
);

interface ClaimRow {
  digest: string;
  task_id: string | null;
  reply_json: string | null;
}

/** A command's reply as its claim keeps it: the SDK's codec, so the state enum and raw bytes read back as they were. */
export function encodeClaimReply(reply: TaskStatusUpdateEvent | undefined): string | null {
  return reply ? JSON.stringify(TaskStatusUpdateEvent.toJSON(reply)) : null;
}

/** A claim row read back: its outcome once accepted, else undefined. */
function acceptedOutcome(row: ClaimRow): ClaimOutcome | undefined {
  if (row.task_id === null) return undefined;
  const reply = row.reply_json === null ? undefined : TaskStatusUpdateEvent.fromJSON(JSON.parse(row.reply_json));
  return { taskId: row.task_id, reply };
}
