import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Role, TaskState } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { migrateToLatest, openStore, type Database, type Store } from '../../src/store/index.js';
import { openPostgresDatabase } from '../../src/store/postgres-database.js';
import { PostgresCoordination } from '../../src/coordination/postgres-coordination.js';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema, type TempSchema } from '../support/postgres.js';
import { callContext, message, newTask, statusUpdate } from '../store/helpers.js';
import { poll, waitFor } from '../support/wait.js';
import type { LoggedEvent } from '../../src/ports.js';

/**
 * `PostgresCoordination`: several instances (each with a store and a coordination pool of its
 * own, as separate processes would have) on one schema, proving each promise of the
 * `Coordination` port across instances: leases, cancel requests, heartbeats and sweeps, the
 * stall rule; and the wake-ups it sends and hears for the store's task logs, which the stores'
 * `TaskFeeds` read (the log itself is tested in task-log.test.ts).
 */

/** Collects what arrives and lets a test wait until what arrived satisfies a condition. */
class Inbox<T> {
  readonly items: T[] = [];
  private readonly arrivals = new EventEmitter();

  readonly put = (item: T): void => {
    this.items.push(item);
    this.arrivals.emit('item');
  };

  until(what: string, test: (items: T[]) => boolean): Promise<unknown> {
    return waitFor(what, this.arrivals, 'item', () => test(this.items), { seen: () => this.items });
  }

  count(n: number): Promise<unknown> {
    return this.until(`${n} items`, (items) => items.length >= n);
  }
}

interface Instance {
  coordination: PostgresCoordination;
  /** The coordination's own pool. */
  db: Kysely<Database>;
  /** The instance's store: its task logs' readers are woken by the coordination. */
  store: Store;
  errors: Inbox<{ error: unknown; what: string }>;
  /** Set by a test that makes this instance fail on purpose. */
  failsOnPurpose?: boolean;
}

interface Cluster {
  schema: TempSchema;
  /** The test's own connection to the schema, for looking at (and tampering with) the tables. */
  admin: Kysely<Database>;
  instances: Instance[];
  /** Starts one more instance; `url` for its LISTEN connection (default the schema's). */
  start(options?: { url?: string }): Promise<Instance>;
}

function openDb(url: string): Promise<Kysely<Database>> {
  return openPostgresDatabase(url, { maxConnections: 4 });
}

async function withCluster(
  count: number,
  options: { leaseMs?: number },
  body: (cluster: Cluster) => Promise<void>,
): Promise<void> {
  const schema = await tempSchema();
  const admin = await openDb(schema.url);
  const instances: Instance[] = [];
  const cluster: Cluster = {
    schema,
    admin,
    instances,
    async start(startOptions = {}) {
      const errors = new Inbox<{ error: unknown; what: string }>();
      const instanceId = randomUUID();
      const store = await openStore({
        // An id of its own: only the coordination's LISTEN connection shows the instance's name.
        databaseUrl: schema.url,
        onFeedError: (error, what) => errors.put({ error, what }),
      });
      const db = await openDb(schema.url);
      const coordination = new PostgresCoordination({
        db,
        url: startOptions.url ?? schema.url,
        events: store.events!,
        feeds: store.feeds,
        instanceId,
        leaseMs: options.leaseMs,
        onError: (error, what) => errors.put({ error, what }),
      });
      const instance = { coordination, db, store, errors };
      instances.push(instance);
      await coordination.start();
      return instance;
    },
  };
  try {
    await migrateToLatest(admin);
    for (let i = 0; i < count; i++) await cluster.start();
    await body(cluster);
    for (const instance of instances.filter((i) => !i.failsOnPurpose)) {
      assert.deepEqual(
        instance.errors.items.map((e) => `${e.what}: ${String(e.error)}`),
        [],
        'no instance reported a failure',
      );
    }
  } finally {
    for (const instance of instances) {
      await instance.coordination.close().catch(() => undefined);
      await instance.db.destroy().catch(() => undefined);
      await instance.store.close().catch(() => undefined);
    }
    await admin.destroy();
    await schema.drop();
  }
}

const alice = callContext('alice');

/** A task of `store` to write events to; `id` is its id. */
async function createTask(store: Store, id: string): Promise<{ id: string; contextId: string }> {
  const task = newTask({ id, state: TaskState.TASK_STATE_WORKING });
  await store.tasks.create(task, alice);
  return task;
}

/** A status update saying who wrote it and its number among that writer's events. */
function numbered(task: { id: string; contextId: string }, from: string, n: number): AgentExecutionEvent {
  const event = statusUpdate(task, TaskState.TASK_STATE_WORKING);
  (event.data as { metadata: Record<string, unknown> }).metadata = { from, n };
  return event;
}

/** Writes the event as a turn of `store`'s instance would: logged, and the other instances woken. */
async function write(store: Store, task: { id: string; contextId: string }, from: string, n: number): Promise<void> {
  await store.tasks.append(task.id, alice, [numbered(task, from, n)]);
}

function label(entry: LoggedEvent): string {
  const { from, n } = (entry.event.data as unknown as { metadata: { from: string; n: number } }).metadata;
  return `${from}${n}`;
}

/** Each writer's events in the order they were received. */
function byWriter(entries: LoggedEvent[]): Record<string, number[]> {
  const seen: Record<string, number[]> = {};
  for (const entry of entries) {
    const { from, n } = (entry.event.data as unknown as { metadata: { from: string; n: number } }).metadata;
    (seen[from] ??= []).push(n);
  }
  return seen;
}

/** Follows the task on `store`'s instance, every event it is handed put in `inbox` until the subscription ends. */
async function followInto(store: Store, taskId: string, inbox: Inbox<LoggedEvent>): Promise<() => void> {
  const subscription = await store.feeds.follow(taskId);
  void (async () => {
    for (let entry = await subscription.next(); entry; entry = await subscription.next()) inbox.put(entry);
  })();
  return () => subscription.close();
}

/** The numbers from `from` (default 0) up to `to`, excluded. */
function range(to: number, from = 0): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

describe('PostgresCoordination: several instances on one PostgreSQL database', needs(POSTGRES), () => {
  it('one turn per task across instances: exactly one instance takes a task, and it is free again once released', async () => {
    await withCluster(3, {}, async ({ instances }) => {
      const [a, b, c] = instances.map((i) => i.coordination) as [
        PostgresCoordination,
        PostgresCoordination,
        PostgresCoordination,
      ];
      const first = await a.acquireTurn('t1');
      assert.notEqual(first, undefined);
      assert.equal(await b.acquireTurn('t1'), undefined, 'held elsewhere');
      assert.equal(await a.acquireTurn('t1'), undefined, 'held here');
      assert.equal(await c.turnHeld('t1'), true);
      await b.releaseTurn('t1');
      assert.equal(await c.turnHeld('t1'), true, 'only the holder gives a turn back');
      await a.releaseTurn('t1');
      assert.equal(await c.turnHeld('t1'), false);
      const next = await b.acquireTurn('t1');
      assert.ok(
        next !== undefined && next > first!,
        `the next lease, on another instance, has a greater epoch: ${next} > ${first}`,
      );

      // Racing: three instances ask for the same forty tasks at once.
      const tasks = range(40).map((i) => `race-${i}`);
      const won = await Promise.all(tasks.map((task) => Promise.all([a, b, c].map((x) => x.acquireTurn(task)))));
      for (const results of won) assert.equal(results.filter(Boolean).length, 1, 'one winner per task');
    });
  });

  it("issue 33: a message's lease reads the task's queue in its own statement, refused while messages wait; a release says whether any wait", async () => {
    await withCluster(2, {}, async ({ instances }) => {
      const [a, b] = instances as [Instance, Instance];
      const entry = {
        taskId: 'q1',
        message: message('q1', 'ctx', Role.ROLE_USER, 'queued'),
        tenant: '',
        owner: 'alice',
        authenticated: false,
        createdMs: Date.now(),
      };
      assert.notEqual(await a.coordination.acquireTurn('q1', { unlessQueued: true }), undefined, 'no queue: taken');
      assert.equal(await a.coordination.releaseTurn('q1'), false, 'no message waits');
      assert.notEqual(await a.coordination.acquireTurn('q1'), undefined);
      await b.store.queue.add(entry, { head: false, max: 10 });
      assert.equal(await a.coordination.releaseTurn('q1'), true, 'the release says a message waits');
      assert.equal(await b.coordination.acquireTurn('q1', { unlessQueued: true }), undefined, 'a message waits');
      assert.equal(await b.coordination.turnHeld('q1'), false, 'and nobody holds the task');
      // The queue's own run takes it all the same, and pops the message under it.
      assert.notEqual(await b.coordination.acquireTurn('q1'), undefined);
      assert.equal((await b.store.queue.pop('q1'))?.message.messageId, entry.message.messageId);
      assert.equal(await a.coordination.releaseTurn('q1'), undefined, "not a's lease: it cannot say");
      assert.equal(await b.coordination.releaseTurn('q1'), false, 'the queue is empty again');
      assert.notEqual(await a.coordination.acquireTurn('q1', { unlessQueued: true }), undefined);
    });
  });

  it('issue 23: events cross instances in order and once: two writers on one task, hundreds of events, followed on a third instance woken by their NOTIFY', async () => {
    await withCluster(3, {}, async ({ instances }) => {
      const [a, b, c] = instances.map((i) => i.store) as [Store, Store, Store];
      const task = await createTask(a, 't');
      const onA = new Inbox<LoggedEvent>();
      const onC = new Inbox<LoggedEvent>();
      const stops = [await followInto(a, 't', onA), await followInto(c, 't', onC)];
      const perWriter = 150;
      // In waves, so that both instances' writes of the task keep meeting in the database.
      for (const wave of range(perWriter / 10)) {
        await Promise.all(
          [a, b].map(async (store, w) => {
            for (const n of range(10 * wave + 10, 10 * wave)) await write(store, task, w === 0 ? 'a' : 'b', n);
          }),
        );
      }
      await onC.count(2 * perWriter);
      await onA.count(2 * perWriter);
      // A marker after everything: a duplicate could only arrive before it, as delivery is in order.
      await write(b, task, 'end', 0);
      for (const inbox of [onA, onC]) {
        await inbox.until('end0', (entries) => label(entries.at(-1)!) === 'end0');
        assert.deepEqual(
          byWriter(inbox.items),
          { a: range(perWriter), b: range(perWriter), end: [0] },
          'every event once, each writer in order',
        );
        assert.deepEqual(
          inbox.items.map((entry) => entry.generation),
          range(2 * perWriter + 3, 2),
          'in generation order',
        );
      }
      for (const stop of stops) stop();
    });
  });

  it('a cancel or stop request reaches every instance, the one that asked included, saying which it is (CMD-32)', async () => {
    await withCluster(3, {}, async ({ instances }) => {
      const heard = instances.map((instance) => {
        const inbox = new Inbox<string>();
        instance.coordination.onCancelRequest((taskId, how) => inbox.put(`${how} ${taskId}`));
        return inbox;
      });
      await instances[1]!.coordination.requestCancel('t');
      await instances[2]!.coordination.requestCancel('u', 'stop');
      await Promise.all(heard.map((inbox) => inbox.count(2)));
      assert.deepEqual(
        heard.map((inbox) => inbox.items),
        instances.map(() => ['cancel t', 'stop u']),
      );
    });
  });

  it("instance loss: a dead instance's leases are released and its turns handed once, to one survivor, after the lease time", async () => {
    const leaseMs = 1000;
    await withCluster(3, { leaseMs }, async ({ instances, admin }) => {
      const [doomed, ...survivors] = instances as [Instance, Instance, Instance];
      assert.notEqual(await doomed.coordination.acquireTurn('t1'), undefined);
      assert.notEqual(await doomed.coordination.acquireTurn('t2'), undefined);
      const calls = new Inbox<{ on: string; taskIds: string[] }>();
      for (const survivor of survivors) {
        survivor.coordination.onOrphanedTurns(async (taskIds) =>
          calls.put({ on: survivor.coordination.instanceId, taskIds: [...taskIds].sort() }),
        );
      }
      assert.equal(await survivors[0].coordination.turnHeld('t1'), true);

      // Dies like a killed process: its connections to the database are gone, nothing is cleaned up.
      doomed.failsOnPurpose = true;
      await doomed.db.destroy();
      await calls.count(1);

      assert.deepEqual(calls.items[0]!.taskIds, ['t1', 't2']);
      assert.equal(await survivors[0].coordination.turnHeld('t1'), false, 'released before the handler was called');
      const left = await admin.selectFrom('instances').select('id').execute();
      assert.deepEqual(
        left.map((row) => row.id).sort(),
        survivors.map((s) => s.coordination.instanceId).sort(),
        'the dead row is gone: no survivor can take it again',
      );
      assert.equal(calls.items.length, 1);
      assert.notEqual(await survivors[1].coordination.acquireTurn('t1'), undefined, 'the task can be taken again');
    });
  });

  it("issue 36: push delivery's leases are their own kind: one instance per (task, config) pair, no turn lease, freed with a dead instance's row", async () => {
    await withCluster(3, { leaseMs: 1000 }, async ({ instances, admin }) => {
      const [doomed, ...survivors] = instances as [Instance, Instance, Instance];
      const [b, c] = survivors.map((s) => s.coordination) as [PostgresCoordination, PostgresCoordination];
      assert.equal(await doomed.coordination.acquirePush('t1', 'c1'), true);
      assert.equal(await b.acquirePush('t1', 'c1'), false, 'held elsewhere');
      assert.equal(await doomed.coordination.acquirePush('t1', 'c1'), false, 'held here');
      assert.equal(await b.acquirePush('t1', 'c2'), true, "another config's pair is free");
      assert.equal(await c.turnHeld('t1'), false, 'a pair holds no turn of its task');
      assert.deepEqual(await admin.selectFrom('turn_leases').select('task_id').execute(), [], 'no turn lease made up');
      await c.releasePush('t1', 'c2');
      assert.equal(await c.acquirePush('t1', 'c2'), false, 'only the holder gives a pair back');
      await b.releasePush('t1', 'c2');
      assert.equal(await c.acquirePush('t1', 'c2'), true, 'free again once released');

      assert.notEqual(await doomed.coordination.acquireTurn('t2'), undefined);
      const orphaned = new Inbox<string[]>();
      for (const survivor of survivors) survivor.coordination.onOrphanedTurns(async (taskIds) => orphaned.put(taskIds));
      doomed.failsOnPurpose = true;
      await doomed.db.destroy();
      await orphaned.count(1);
      assert.deepEqual(orphaned.items[0], ['t2'], "the dead instance's turns alone, no pair among them");
      assert.equal(await b.acquirePush('t1', 'c1'), true, "the dead instance's pair is taken up by a survivor");
    });
  });

  it('an instance taken for dead while it was paused takes a turn as soon as it wakes, before its next heartbeat: it registers again', async () => {
    // A lease long enough that no heartbeat comes between the takeover and the next turn.
    await withCluster(2, { leaseMs: 60_000 }, async ({ instances, admin }) => {
      const [paused, survivor] = instances as [Instance, Instance];
      // What a survivor's sweep does to an instance paused past its lease: its row and leases go.
      await admin.deleteFrom('instances').where('id', '=', paused.coordination.instanceId).execute();

      const epoch = await paused.coordination.acquireTurn('t1');
      assert.notEqual(epoch, undefined, "the turn is taken, not refused by the lease table's foreign key");
      assert.equal(await survivor.coordination.turnHeld('t1'), true);
      const rows = await admin.selectFrom('instances').select('id').execute();
      assert.ok(
        rows.some((row) => row.id === paused.coordination.instanceId),
        'its row is back',
      );
      assert.equal(paused.errors.items.length, 0);
    });
  });

  it('instance loss with several dead instances and survivors: each dead instance is taken by exactly one survivor', async () => {
    const leaseMs = 1000;
    await withCluster(3, { leaseMs }, async ({ instances, admin }) => {
      // Rows as killed instances leave them: a heartbeat long past, leases still held.
      const dead = range(12).map((i) => `dead-${i}`);
      await admin
        .insertInto('instances')
        .values(dead.map((id) => ({ id, heartbeat: sql<number>`(extract(epoch from now()) * 1000)::bigint - 60000` })))
        .execute();
      await admin
        .insertInto('turn_leases')
        .values(
          dead.flatMap((id) => [
            { task_id: `${id}-x`, instance_id: id },
            { task_id: `${id}-y`, instance_id: id },
          ]),
        )
        .execute();

      const calls = new Inbox<{ on: string; taskIds: string[] }>();
      for (const { coordination } of instances) {
        coordination.onOrphanedTurns(async (taskIds) =>
          calls.put({ on: coordination.instanceId, taskIds: [...taskIds].sort() }),
        );
      }
      await calls.count(dead.length);

      const handed = calls.items.map((call) => call.taskIds.join(' ')).sort();
      assert.deepEqual(
        handed,
        dead.map((id) => `${id}-x ${id}-y`).sort(),
        "each dead instance's turns handed once, together",
      );
      assert.deepEqual(await admin.selectFrom('turn_leases').select('task_id').execute(), []);
      assert.equal(
        (await admin.selectFrom('instances').select('id').execute()).length,
        instances.length,
        'only the living remain',
      );
    });
  });

  it('a lost LISTEN connection loses no event: it reconnects and reads what was logged while it was away', async () => {
    const role = `th_test_listen_${randomBytes(4).toString('hex')}`;
    await withCluster(1, {}, async ({ schema, admin, start, instances }) => {
      await sql`create role ${sql.id(role)} login`.execute(admin);
      try {
        const writer = instances[0]!;
        const task = await createTask(writer.store, 't');
        // The follower's LISTEN connection logs in as a role of its own, so the test can keep it out.
        const listenUrl = new URL(schema.url);
        listenUrl.username = role;
        const follower = await start({ url: listenUrl.toString() });
        follower.failsOnPurpose = true;
        const received = new Inbox<LoggedEvent>();
        await followInto(follower.store, 't', received);
        await write(writer.store, task, 'a', 0);
        await received.count(1);

        // The connection is killed, and every attempt to reconnect is refused for a while.
        await sql`alter role ${sql.id(role)} nologin`.execute(admin);
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${`tiny-harness ${follower.coordination.instanceId}`}`.execute(
          admin,
        );
        await follower.errors.until('a reconnecting error', (errors) =>
          errors.some((e) => e.what === 'reconnecting the LISTEN connection'),
        );

        // Logged and committed while nobody listens on the follower's side: the wake-ups are lost.
        for (const n of range(50, 1)) await write(writer.store, task, 'a', n);
        await writer.coordination.close();

        await sql`alter role ${sql.id(role)} login`.execute(admin);
        await received.count(50);
        assert.deepEqual(byWriter(received.items), { a: range(50) });
        assert.ok(
          follower.errors.items.some((e) => e.what === 'the LISTEN connection was lost; reconnecting'),
          'the loss was reported',
        );
      } finally {
        for (const instance of instances) await instance.coordination.close().catch(() => undefined);
        await sql`drop role if exists ${sql.id(role)}`.execute(admin);
      }
    });
  });

  it('close sends the wake-ups due, then releases its leases, its instance row and its LISTEN connection', async () => {
    await withCluster(2, {}, async ({ instances, admin }) => {
      const [a, b] = instances as [Instance, Instance];
      const task = await createTask(a.store, 't');
      const received = new Inbox<LoggedEvent>();
      await followInto(b.store, 't', received);
      assert.notEqual(await a.coordination.acquireTurn('t'), undefined);
      const writes = range(100).map((n) => write(a.store, task, 'a', n));
      await Promise.all(writes);
      await a.coordination.close();

      assert.equal(await b.coordination.turnHeld('t'), false);
      assert.deepEqual(
        (await admin.selectFrom('instances').select('id').execute()).map((row) => row.id),
        [b.coordination.instanceId],
      );
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_stat_activity where application_name = ${`tiny-harness ${a.coordination.instanceId}`}`.execute(
        admin,
      );
      assert.equal(rows[0]!.n, 0, 'the LISTEN connection is closed');
      await received.count(100);
      assert.deepEqual(byWriter(received.items), { a: range(100) });
    });
  });

  it('a stall of the database longer than the lease takes over nobody, even an instance whose heartbeat comes back after the others have swept', async () => {
    // B must come back within the interval after A's and C's first sweeps: a heartbeat interval
    // (a third of the lease) of 1.5 s leaves the test's own polling room on a busy machine.
    const leaseMs = 4500;
    await withCluster(3, { leaseMs }, async ({ instances, admin, schema }) => {
      const [a, b, c] = instances as [Instance, Instance, Instance];
      const calls = new Inbox<string[]>();
      for (const { coordination } of instances) {
        assert.notEqual(await coordination.acquireTurn(`turn-of-${coordination.instanceId}`), undefined);
        coordination.onOrphanedTurns(async (taskIds) => calls.put(taskIds));
      }
      const rowsNow = async () => ({
        instances: (await admin.selectFrom('instances').select('id').orderBy('id').execute()).map((r) => r.id),
        leases: await admin.selectFrom('turn_leases').selectAll().orderBy('task_id').execute(),
      });
      const before = await rowsNow();
      const heartbeatOf = async (instance: Instance) =>
        Number(
          (
            await admin
              .selectFrom('instances')
              .select('heartbeat')
              .where('id', '=', instance.coordination.instanceId)
              .executeTakeFirst()
          )?.heartbeat ?? 0,
        );
      const clock = async (client: pg.Client) =>
        Number(
          (await client.query<{ ms: string }>('select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms'))
            .rows[0]!.ms,
        );

      const locker = new pg.Client({ connectionString: schema.url });
      const blocker = new pg.Client({ connectionString: schema.url });
      await locker.connect();
      await blocker.connect();
      try {
        // Right after B's heartbeat, B's pool is held up beside the database (every connection
        // waits on an advisory lock) and the heartbeat table is locked: B's next heartbeat reaches
        // the database only when the test lets it, after the stall and after the others' sweeps.
        await blocker.query('select pg_advisory_lock(23)');
        const last = await heartbeatOf(b);
        await poll("B's next heartbeat", async () => (await heartbeatOf(b)) > last);
        const heldUp = Array.from({ length: 4 }, () => sql`select pg_advisory_xact_lock_shared(23)`.execute(b.db));
        await locker.query('begin');
        await locker.query('lock table instances in access exclusive mode');
        await poll('every heartbeat older than the lease', async () => {
          const { rows } = await locker.query<{ newest: string }>('select max(heartbeat) as newest from instances');
          return (await clock(locker)) - Number(rows[0]!.newest) > 1.5 * leaseMs;
        });
        const released = await clock(locker);
        await locker.query('commit');

        // A and C write their heartbeats and each sweeps once (a tick sweeps after its heartbeat, and
        // the next heartbeat comes after that sweep), while B's heartbeat is still older than the lease.
        await Promise.all(
          [a, c].map(async (instance) => {
            const first = await poll('a heartbeat after the stall', async () => {
              const beat = await heartbeatOf(instance);
              return beat > released && beat;
            });
            await poll('the heartbeat after that', async () => (await heartbeatOf(instance)) > first);
          }),
        );
        assert.ok((await heartbeatOf(b)) < released - leaseMs, "B's heartbeat has not come back yet");
        await blocker.query('select pg_advisory_unlock(23)');
        await Promise.all(heldUp);

        // Two leases of heartbeats from everyone: every sweep the stall could have set off has run.
        const back = await clock(blocker);
        await poll('two leases of heartbeats after B came back', async () => {
          const beats = await Promise.all(instances.map(heartbeatOf));
          return beats.some((beat) => beat === 0) || beats.every((beat) => beat > back + 2 * leaseMs);
        });
      } finally {
        await blocker.end();
        await locker.end();
      }
      assert.deepEqual(await rowsNow(), before, 'the same instances, each still holding its lease');
      assert.deepEqual(calls.items, [], 'no turn handed on');
    });
  });
});
