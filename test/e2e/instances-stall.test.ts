/**
 * Issue 23: a database stall longer than the lease must not end the running turns of live
 * instances. Three `serve --database` processes share a schema of their own, each running a turn
 * held open by the fixture model server; then a test connection locks the heartbeat table
 * (`instances`) until every heartbeat in it is older than the lease by the database's clock, as
 * an outside check did with a 15 s lock on a 10 s lease, which made the three instances declare
 * each other dead and end all three turns as interrupted. Once the lock is released, nothing is
 * taken over: the instances, their leases and their turns are the same, and each turn, when its
 * reply is released, ends as a finished turn.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { TaskState, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES, type TempSchema } from '../support/postgres.js';
import { startCluster, type Cluster } from './process.js';
import { textOf } from './support.js';
import { poll, within } from '../support/wait.js';

/** Short, so that the stall outlasts it soon; heartbeats come three times per lease. */
const LEASE_MS = 1200;
const REPLY = 'one two three four five six seven eight';

/** The database's clock, in ms since the epoch, as the instances write their heartbeats with it. */
const CLOCK_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** The two ways an outside check stalls the heartbeats: the whole table, or every row of it. */
const STALLS = [
  { name: 'an exclusive lock on the heartbeat table', lock: 'lock table instances in access exclusive mode' },
  { name: 'a lock on every row of the heartbeat table', lock: 'select id from instances for update' },
];

describe('instances on PostgreSQL through a database stall longer than the lease (issue 23)', needs(POSTGRES), () => {
  let cluster: Cluster;
  let schema: TempSchema;
  let admin: pg.Client;
  let clients: Client[] = [];

  before(async () => {
    cluster = await startCluster({
      instanceLeaseMs: LEASE_MS,
      start: 'one by one',
      reply: REPLY,
      holdAfterChunks: 2,
    });
    ({ schema, clients } = cluster);
    admin = new pg.Client({ connectionString: schema.url });
    await admin.connect();
  });

  after(async () => {
    await admin?.end();
    await cluster?.close();
  });

  /** A streamed turn on `client` whose reply holds after two chunks until `release()`; `ended` resolves with its status updates. */
  async function heldTurn(client: Client) {
    const { first, stream, release } = await cluster.heldTurn(client);
    assert.equal(first.payload?.$case, 'task');
    const ended = (async () => {
      const updates: TaskStatusUpdateEvent[] = [];
      for await (const event of stream) if (event.payload?.$case === 'statusUpdate') updates.push(event.payload.value);
      return updates;
    })();
    return { taskId: first.payload.value.id, ended, release };
  }

  async function rows<T extends pg.QueryResultRow>(text: string, client = admin): Promise<T[]> {
    return (await client.query<T>(text)).rows;
  }

  /** The instances and who holds which lease, in an order that compares. */
  async function leases(): Promise<{ instances: string[]; leases: string[] }> {
    const alive = await rows<{ id: string }>('select id from instances order by id');
    const held = await rows<{ task_id: string; instance_id: string }>(
      'select task_id, instance_id from turn_leases order by task_id',
    );
    return { instances: alive.map((row) => row.id), leases: held.map((row) => `${row.task_id} ${row.instance_id}`) };
  }

  for (const stall of STALLS) {
    it(`${stall.name}, held until every heartbeat is older than the lease, ends no turn and takes over no lease`, async () => {
      const turns = await Promise.all(clients.map((client) => heldTurn(client)));
      const before = await leases();
      assert.equal(before.instances.length, 3);
      assert.equal(before.leases.length, 3, 'one lease per running turn');

      const locker = new pg.Client({ connectionString: schema.url });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query(stall.lock);
        // Every instance's heartbeats wait on the lock: its next heartbeat, or the sweep of the
        // tick the lock caught (a tick sweeps after its heartbeat, and the next heartbeat waits
        // for that sweep; a table lock holds back its read of the heartbeats too)...
        const names = before.instances.map((id) => `tiny-harness ${id}`);
        await poll('each instance waiting on the lock to write its heartbeat', async () => {
          const waiting = await rows<{ application_name: string }>(
            `select distinct application_name from pg_stat_activity
             where wait_event_type = 'Lock' and query ilike '%instances%'
               and application_name = any('{${names.join(',')}}'::text[])`,
          );
          return waiting.length === names.length;
        });
        // ... until every heartbeat is older than the lease by the database's clock: the moment
        // the instances, once the lock is gone, took each other for dead.
        await poll(
          'every heartbeat older than the lease',
          async () =>
            (
              await rows<{ stale: boolean }>(
                `select ${CLOCK_MS} - max(heartbeat) > ${1.5 * LEASE_MS} as stale from instances`,
                locker,
              )
            )[0]!.stale,
        );
        await locker.query('commit');
      } finally {
        await locker.end();
      }

      // Two leases of heartbeats after the stall: a tick sweeps after its heartbeat, so every
      // sweep the stall could have set off has run by then.
      const [{ released }] = (await rows<{ released: string }>(`select ${CLOCK_MS} as released`)) as [
        { released: string },
      ];
      await poll('two leases of heartbeats from every instance after the stall', async () => {
        const [beats] = await rows<{ n: string; oldest: string }>(
          'select count(*) as n, min(heartbeat) as oldest from instances',
        );
        return Number(beats!.n) < 3 || Number(beats!.oldest) > Number(released) + 2 * LEASE_MS;
      });
      assert.deepEqual(await leases(), before, 'the same instances, each still holding its turn');

      for (const turn of turns) turn.release();
      for (const turn of turns) {
        const updates = await within(`the end of turn ${turn.taskId}`, turn.ended);
        const last = updates.at(-1);
        assert.equal(last?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, `turn ${turn.taskId}`);
        assert.doesNotMatch(textOf(last?.status?.message), /interrupted/, 'ended as a finished turn');
        assert.ok(!updates.some((update) => /interrupted/.test(textOf(update.status?.message))), 'never interrupted');
      }
      const task = await clients[0]!.getTask({ tenant: '', id: turns[0]!.taskId });
      assert.equal(textOf(task.history.at(-1)), REPLY, "the model's whole reply is the turn's last message");
    });
  }
});
