import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { decodeMessage, encodeMessage } from './codec.js';
import type { Database } from './database.js';
import { isPostgres } from './dialect.js';
import type { Added, QueuedMessage } from '../ports.js';
import { QueryTemplate } from './query-template.js';
import { readTogether } from './reads-together.js';

/**
 * Each task's queue of messages sent while a turn ran (spec/while-busy-extension-v1.md): in
 * `seq` order, the head first. A message keeps the scope (tenant, owner) of the request that
 * queued it: its turn runs as that user, on whichever instance takes it.
 */

/** A task's queue, the head first: built once (`query-template.ts`), as `/status` reads it every time. */
const QUEUE = new QueryTemplate<Database, readonly [string], Selectable<Database['task_queue']>>(1, (db, taskId) =>
  db.selectFrom('task_queue').selectAll().where('task_id', '=', taskId).orderBy('seq'),
);

export class SqlTaskQueue {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Adds the message at the tail, or at the head (`interrupt`), unless the queue holds `max`
   * already. One transaction, under the task row's lock when shared: two instances adding at
   * once get distinct places.
   */
  async add(entry: QueuedMessage, options: { head: boolean; max: number }): Promise<Added> {
    const { taskId, message } = entry;
    return this.db.transaction().execute(async (trx) => {
      await trx
        .selectFrom('tasks')
        .select('id')
        .where('id', '=', taskId)
        .$if(isPostgres(this.db), (q) => q.forUpdate())
        .executeTakeFirst();
      const present = await positionIn(trx, taskId, message.messageId);
      if (present !== undefined) return { kind: 'present', position: present };
      const bounds = await trx
        .selectFrom('task_queue')
        .select((eb) => [eb.fn.countAll().as('n'), eb.fn.min('seq').as('first'), eb.fn.max('seq').as('last')])
        .where('task_id', '=', taskId)
        .executeTakeFirstOrThrow();
      const size = Number(bounds.n);
      if (size >= options.max) return { kind: 'full', size };
      const seq = size === 0 ? 0 : options.head ? Number(bounds.first) - 1 : Number(bounds.last) + 1;
      await trx
        .insertInto('task_queue')
        .values({
          task_id: taskId,
          seq,
          message_id: message.messageId,
          message_json: encodeMessage(message),
          tenant: entry.tenant,
          owner: entry.owner,
          authenticated: entry.authenticated ? 1 : 0,
          created_ms: entry.createdMs,
        })
        .execute();
      return { kind: 'added', position: options.head ? 1 : size + 1 };
    });
  }

  /** The message's place in the task's queue (1 = next); undefined when it is not queued. */
  position(taskId: string, messageId: string): Promise<number | undefined> {
    return positionIn(this.db, taskId, messageId);
  }

  /** The task's queue, the head first. */
  async list(taskId: string): Promise<QueuedMessage[]> {
    return (await readTogether(this.db, QUEUE.compile(this.db, [taskId]))).map(toQueued);
  }

  /** How many messages wait on the task. */
  async size(taskId: string): Promise<number> {
    const row = await this.db
      .selectFrom('task_queue')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('task_id', '=', taskId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Takes the head of the task's queue off it; undefined when it is empty. Call it holding the task's turn lease. */
  async pop(taskId: string): Promise<QueuedMessage | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const head = await trx
        .selectFrom('task_queue')
        .selectAll()
        .where('task_id', '=', taskId)
        .orderBy('seq')
        .limit(1)
        .executeTakeFirst();
      if (!head) return undefined;
      await trx.deleteFrom('task_queue').where('task_id', '=', taskId).where('seq', '=', head.seq).execute();
      return toQueued(head);
    });
  }

  /** Drops the task's queue (the task ended); resolves with the messages dropped. */
  async drop(taskId: string): Promise<number> {
    const result = await this.db.deleteFrom('task_queue').where('task_id', '=', taskId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Every task with messages waiting: start-up runs their queues. */
  async tasks(): Promise<string[]> {
    const rows = await this.db.selectFrom('task_queue').select('task_id').distinct().execute();
    return rows.map((row) => row.task_id);
  }
}

async function positionIn(
  db: Kysely<Database> | Transaction<Database>,
  taskId: string,
  messageId: string,
): Promise<number | undefined> {
  const row = await sql<{ n: number | string }>`
    select count(*) as n from task_queue q
    where q.task_id = ${taskId} and q.seq <= (select seq from task_queue where task_id = ${taskId} and message_id = ${messageId})`.execute(
    db,
  );
  const n = Number(row.rows[0]?.n ?? 0);
  return n === 0 ? undefined : n;
}

function toQueued(row: {
  task_id: string;
  message_json: string;
  tenant: string;
  owner: string;
  authenticated: number | string;
  created_ms: number | string;
}): QueuedMessage {
  return {
    taskId: row.task_id,
    message: decodeMessage(row.message_json),
    tenant: row.tenant,
    owner: row.owner,
    authenticated: Number(row.authenticated) === 1,
    createdMs: Number(row.created_ms),
  };
}
