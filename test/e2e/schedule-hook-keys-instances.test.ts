/**
 * Issue 39, a hook's idempotency keys on two instances sharing PostgreSQL: the same
 * `Idempotency-Key` POSTed to both at once, each claim held mid-transaction until the other has
 * begun, starts one run; both are answered 202 with its task id, one of them `repeated`. A
 * repeat later, on the other instance, is answered the same. The instances are real `serve`
 * processes.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { lockTable, POSTGRES, withDb } from '../support/postgres.js';
import { poll } from '../support/wait.js';
import { startCluster, type Cluster, type ServerProcess } from './process.js';
import { dataOf, send } from './support.js';

let cluster: Cluster | undefined;

after(async () => {
  await cluster?.close();
});

type Answer = { status: number; body: { taskId: string; repeated?: boolean } };

async function post(url: string, key: string): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    body: 'deploy finished',
    headers: { 'content-type': 'text/plain', 'idempotency-key': key },
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

describe("issue 39: a hook's idempotency keys on several instances", needs(POSTGRES), () => {
  it('issue 39: the same Idempotency-Key POSTed to two instances at once, both mid-claim: one run; both answers name it, one repeated', async () => {
    cluster = await startCluster({
      names: ['a', 'b'],
      start: 'together',
      reply: 'done',
      holdAfterChunks: 1,
      config: { schedules: { pollMs: 100 } },
    });
    const [a, b] = cluster.instances as [ServerProcess, ServerProcess];
    const [aClient] = cluster.clients as [Client, Client];
    const dbUrl = cluster.schema.url;
    const first = await send(aClient, 'hello');
    const made = await send(aClient, '/schedule hook announce', { taskId: first.id });
    const path = new URL(dataOf(made.status?.message).schedule.url).pathname;
    const key = 'deploy-7f3e';
    // schedule_runs locked against writes: each instance reads that no run holds the key, then
    // waits at its claim's insert (this cluster's instances, by their connections' names): both
    // are under way before either can land.
    const lock = await lockTable(dbUrl, 'schedule_runs', 'EXCLUSIVE');
    try {
      const answers = Promise.all([post(`${a.url}${path}`, key), post(`${b.url}${path}`, key)]);
      await poll('both claims waiting at their insert', () =>
        withDb(dbUrl, async (db) => {
          const { rows } = await db.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query ILIKE 'insert into "schedule_runs"%'
               AND application_name IN (SELECT 'tiny-harness ' || id FROM instances)`,
          );
          return rows[0].n >= 2;
        }),
      );
      await lock.release();
      const [onA, onB] = await answers;
      assert.deepEqual([onA.status, onB.status], [202, 202]);
      assert.equal(onA.body.taskId, onB.body.taskId);
      assert.deepEqual([onA.body.repeated, onB.body.repeated].filter(Boolean), [true]);
      const { taskId } = onA.body;
      const run = await poll('the run ended', async () => {
        // The 202 comes once the turn has started, maybe before its first write (on the other instance).
        const task = await aClient.getTask({ tenant: '', id: taskId, historyLength: 10 }).catch(() => undefined);
        return task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? task : undefined;
      });
      assert.equal(run.id, taskId);
      // Later, on either instance: the same run.
      for (const instance of [b, a])
        assert.deepEqual((await post(`${instance.url}${path}`, key)).body, {
          taskId,
          repeated: true,
        });
      const rows = await withDb(
        dbUrl,
        async (db) => (await db.query('SELECT task_id, idempotency_key FROM schedule_runs')).rows,
      );
      assert.deepEqual(rows, [{ task_id: taskId, idempotency_key: key }]);
      assert.equal(
        cluster.model.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes('deploy finished')).length,
        1,
        'the model was asked once',
      );
      const secret = path.split('/').at(-1)!;
      for (const instance of cluster.instances) assert.ok(!instance.stderr().includes(secret));
    } finally {
      await lock.release();
      await cluster?.close();
      cluster = undefined;
    }
  });
});
