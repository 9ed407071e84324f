import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/database.js';
import { clockMs } from './postgres-clock.js';
import { readTogether } from '../store/reads-together.js';

/**
 * The rows that say which instance runs which task's turn, and which instances are alive.
 * The primary key of `turn_leases` is "one turn per task"; its foreign key to `instances` is
 * what makes taking over a dead instance exact: a lease being inserted holds a key-share lock
 * on its instance's row, so a sweeper locking that row for update either waits for the insert
 * (and then deletes that lease too) or makes it fail; no lease outlives its instance's row.
 *
 * Each lease has an epoch, a fencing token: every write of the turn carries it, and the task's
 * row keeps the highest epoch that wrote it (`tasks.fence_epoch`, checked under the row's lock
 * in `store/task-images.ts`). A sweeper taking a dead instance's leases raises the fence of their
 * tasks above every epoch given so far, in the same transaction, so that a turn of an instance
 * that was only paused (SIGSTOP, a VM frozen) writes nothing once it wakes up, and a later turn,
 * whose lease has a greater epoch, writes over that fence.
 */

/**
 * Takes the task's lease for `instanceId`: its epoch, or undefined when any instance holds it,
 * or (`unlessQueued`) when messages wait in the task's queue, which go first. The queue is read
 * in the lease's own statement: a message sent to an idle task costs no round trip to ask.
 */
export async function insertLease(
  db: Kysely<Database>,
  taskId: string,
  instanceId: string,
  { unlessQueued = false } = {},
): Promise<number | undefined> {
  const lease = db
    .selectNoFrom((eb) => [eb.val(taskId).as('task_id'), eb.val(instanceId).as('instance_id')])
    .$if(unlessQueued, (q) =>
      q.where((eb) => eb.not(eb.exists(eb.selectFrom('task_queue').select('seq').where('task_id', '=', taskId)))),
    );
  const inserted = await db
    .insertInto('turn_leases')
    .columns(['task_id', 'instance_id'])
    .expression(lease)
    .onConflict((oc) => oc.column('task_id').doNothing())
    .returning('epoch')
    .executeTakeFirst();
  return inserted && Number(inserted.epoch);
}

/**
 * Gives the task's lease back, if `instanceId` holds it (a sweeper may have taken it already);
 * resolves with whether messages wait in the task's queue, read in the same statement, or
 * undefined when the lease was no longer this instance's.
 */
export async function deleteLease(
  db: Kysely<Database>,
  taskId: string,
  instanceId: string,
): Promise<boolean | undefined> {
  const deleted = await db
    .deleteFrom('turn_leases')
    .where('task_id', '=', taskId)
    .where('instance_id', '=', instanceId)
    .returning(({ exists, selectFrom }) =>
      exists(selectFrom('task_queue').select('seq').where('task_id', '=', taskId)).as('queued'),
    )
    .executeTakeFirst();
  return deleted && Boolean(deleted.queued);
}

export async function leaseExists(db: Kysely<Database>, taskId: string): Promise<boolean> {
  const rows = await readTogether(db, db.selectFrom('turn_leases').select('task_id').where('task_id', '=', taskId));
  return rows.length > 0;
}

/**
 * Registers an instance as alive now; resolves with its heartbeat, by the database's clock.
 * `ifMissing`: a row written meanwhile (by the instance's heartbeat) gets this heartbeat instead.
 */
export async function insertInstance(
  db: Kysely<Database>,
  instanceId: string,
  { ifMissing = false } = {},
): Promise<number> {
  const row = await db
    .insertInto('instances')
    .values({ id: instanceId, heartbeat: clockMs })
    .$if(ifMissing, (query) => query.onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat: clockMs })))
    .returning('heartbeat')
    .executeTakeFirstOrThrow();
  return Number(row.heartbeat);
}

/**
 * Renews the instance's heartbeat; resolves with the time written, by the database's clock, or
 * undefined when its row is gone (it was taken for dead). The row is locked first, in the
 * subquery: an update that waits for a row lock has already computed the row it writes, so
 * `clock_timestamp()` in it would be the time before the wait, and a heartbeat held back by a
 * lock would be written already as old as the wait.
 */
export async function renewHeartbeat(db: Kysely<Database>, instanceId: string): Promise<number | undefined> {
  const row = await db
    .updateTable('instances')
    .set({ heartbeat: clockMs })
    .where('id', '=', (eb) => eb.selectFrom('instances').select('id').where('id', '=', instanceId).forNoKeyUpdate())
    .returning('heartbeat')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.heartbeat);
}

/** Instances other than `self` whose heartbeat is older than `deadBefore` (see `heartbeat-history.ts`). */
export async function staleInstances(db: Kysely<Database>, self: string, deadBefore: number): Promise<string[]> {
  const rows = await db
    .selectFrom('instances')
    .select('id')
    .where('heartbeat', '<', deadBefore)
    .where('id', '<>', self)
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Takes a dead instance's place: deletes its leases (its push leases too: another instance takes
 * those pairs up) and its row in one transaction, returning the tasks whose turn leases it held, or undefined when another survivor took it first (or its
 * heartbeat came back: a heartbeat that was waiting for the row's lock is written first, and the
 * lock is then taken on the row it wrote, no longer older than `deadBefore`). The row lock decides
 * between survivors sweeping at once: the second waits, then finds the row gone and gets undefined.
 * The tasks' fences are raised past every epoch given so far: the dead instance's turns, should
 * it only have been paused, write nothing more. That waits for a write of theirs holding a task's
 * row lock, which `idle_in_transaction_session_timeout` ends if its instance is paused
 * (`store/postgres-database.ts`).
 */
export async function takeOverInstance(
  db: Kysely<Database>,
  deadId: string,
  deadBefore: number,
): Promise<string[] | undefined> {
  return db.transaction().execute(async (tx) => {
    const dead = await tx
      .selectFrom('instances')
      .select('id')
      .where('id', '=', deadId)
      .where('heartbeat', '<', deadBefore)
      .forUpdate()
      .executeTakeFirst();
    if (!dead) return undefined;
    await tx.deleteFrom('push_leases').where('instance_id', '=', deadId).execute();
    const leases = await tx.deleteFrom('turn_leases').where('instance_id', '=', deadId).returning('task_id').execute();
    const taskIds = leases.map((lease) => lease.task_id);
    if (taskIds.length > 0)
      await sql`update tasks set fence_epoch = nextval('turn_lease_epochs') where id in (${sql.join(taskIds)})`.execute(
        tx,
      );
    await tx.deleteFrom('instances').where('id', '=', deadId).execute();
    return taskIds;
  });
}

/** Removes a closing instance's leases (turns' and push's) and row: its turns have ended or will not be ended by it. */
export async function removeInstance(db: Kysely<Database>, instanceId: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('push_leases').where('instance_id', '=', instanceId).execute();
    await tx.deleteFrom('turn_leases').where('instance_id', '=', instanceId).execute();
    await tx.deleteFrom('instances').where('id', '=', instanceId).execute();
  });
}
