import type { Kysely } from 'kysely';
import type { Database } from '../store/database.js';

/**
 * The rows that say which instance delivers which (task, config) pair's push notifications
 * (`runtime/push-delivery.ts`): one instance per pair, so that a pair's deliveries go out in
 * order. Apart from the turns' leases (`turn-leases.ts`): a pair holds no task, fences no write,
 * and an instance that dies leaves no turn to recover, only pairs another instance takes up
 * once the dead one's row is gone (its leases go with it, in `takeOverInstance`).
 */

/** Takes the pair for `instanceId`: false when an instance (this one included) delivers it now. */
export async function insertPushLease(
  db: Kysely<Database>,
  taskId: string,
  configId: string,
  instanceId: string,
): Promise<boolean> {
  const inserted = await db
    .insertInto('push_leases')
    .values({ task_id: taskId, config_id: configId, instance_id: instanceId })
    .onConflict((oc) => oc.columns(['task_id', 'config_id']).doNothing())
    .returning('task_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Gives the pair back, if `instanceId` holds it (a survivor may have taken it already). */
export async function deletePushLease(
  db: Kysely<Database>,
  taskId: string,
  configId: string,
  instanceId: string,
): Promise<void> {
  await db
    .deleteFrom('push_leases')
    .where('task_id', '=', taskId)
    .where('config_id', '=', configId)
    .where('instance_id', '=', instanceId)
    .execute();
}
