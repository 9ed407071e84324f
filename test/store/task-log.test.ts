import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { LogSubscription, TaskFeeds, type Store } from '../../src/store/index.js';
import { encodeAgentEvent } from '../../src/store/event-codec.js';
import { pruneLog, readLogAfter } from '../../src/store/task-log.js';
import {
  artifact,
  artifactUpdate,
  at,
  callContext,
  newTask,
  POSTGRESQL,
  reply,
  statusUpdate,
  storeBackends,
  taskEvent,
  tempStore,
  textPart,
  type TempStore,
} from './helpers.js';
import type { LoggedEvent } from '../../src/ports.js';

/**
 * Issue 23: each task's ordered event log (`task-log.ts`), written with the task in one
 * transaction on both backends, numbered by the task's generation; and its readers on an
 * instance (`TaskFeeds`), alone and, on PostgreSQL, with other instances writing.
 */

const alice = callContext('alice');

/** The next `count` events of a subscription. */
async function take(subscription: LogSubscription, count: number): Promise<LoggedEvent[]> {
  const taken: LoggedEvent[] = [];
  while (taken.length < count) {
    const next = await subscription.next();
    assert.ok(next, `the subscription ended after ${taken.length} of ${count} events`);
    taken.push(next);
  }
  return taken;
}

/** A status update numbered `n`, to tell the events of a test apart. */
function numbered(task: { id: string; contextId: string }, n: number): AgentExecutionEvent {
  const event = statusUpdate(task, TaskState.TASK_STATE_WORKING, undefined, at(n));
  (event.data as { metadata: Record<string, unknown> }).metadata = { n };
  return event;
}

const numberOf = (entry: LoggedEvent) => (entry.event.data as unknown as { metadata: { n: number } }).metadata.n;

/**
 * Writes a marker event and checks it is the subscription's next: nothing else (a duplicate, an
 * event out of order) waits before it, since the subscription hands events out in order.
 */
async function nextIsMarker(
  store: Store,
  subscription: LogSubscription,
  task: { id: string; contextId: string },
  n: number,
): Promise<void> {
  const { logged } = await store.tasks.append(task.id, alice, [numbered(task, n)]);
  assert.deepStrictEqual(await take(subscription, 1), logged);
}

for (const backend of storeBackends) {
  describe(`issue 23: the task log on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    beforeEach(async () => {
      temp = await tempStore(backend);
    });
    afterEach(async () => {
      await temp.dispose();
    });

    it('issue 23: generation 1 at creation, +1 per logged event; read returns the generation the task reflects', async () => {
      const { tasks, db } = temp.store;
      const task = newTask({ state: TaskState.TASK_STATE_SUBMITTED });
      const created = await tasks.create(task, alice);
      assert.deepStrictEqual(created.logged, [{ generation: 1, event: taskEvent(task) }]);
      assert.equal((await tasks.read(task.id, alice))?.generation, 1);

      const events = [
        statusUpdate(task, TaskState.TASK_STATE_WORKING),
        artifactUpdate(task, artifact('answer', [textPart('one')])),
        artifactUpdate(task, artifact('answer', [textPart('two')]), true),
      ];
      const { logged } = await tasks.append(task.id, alice, events);
      assert.deepStrictEqual(logged, [
        { generation: 2, event: events[0] },
        { generation: 3, event: events[1] },
        { generation: 4, event: events[2] },
      ]);
      let snapshot = (await tasks.read(task.id, alice))!;
      assert.equal(snapshot.generation, 4);
      assert.deepStrictEqual(
        snapshot.task.artifacts[0]?.parts.map((p) => p.content?.value),
        ['one', 'two'],
      );

      // Events that change nothing are not logged: the generation stays.
      const done = statusUpdate(task, TaskState.TASK_STATE_COMPLETED, reply(task, 'done'));
      const ended = await tasks.append(task.id, alice, [done, statusUpdate(task, TaskState.TASK_STATE_WORKING)]);
      assert.deepStrictEqual(ended.logged, [{ generation: 5, event: done }]);
      assert.deepStrictEqual(
        (await tasks.append(task.id, alice, [{ kind: 'message', data: reply(task, 'no') }])).logged,
        [],
      );
      assert.equal(await tasks.modify(task.id, alice, () => undefined), undefined);
      snapshot = (await tasks.read(task.id, alice))!;
      assert.equal(snapshot.generation, 5);
      assert.equal(snapshot.task.status?.state, TaskState.TASK_STATE_COMPLETED);

      // The log as stored: every event once, in order, as it was given.
      const stored = await readLogAfter(db, task.id, 0);
      assert.deepStrictEqual(
        stored.map((l) => [l.generation, encodeAgentEvent(l.event)]),
        [created.logged[0]!, ...logged, ...ended.logged].map((l) => [l.generation, encodeAgentEvent(l.event)]),
      );
      assert.deepStrictEqual(
        (await readLogAfter(db, task.id, 3)).map((l) => l.generation),
        [4, 5],
      );
      const row = await db.selectFrom('tasks').select('generation').where('id', '=', task.id).executeTakeFirstOrThrow();
      assert.equal(Number(row.generation), 5);

      // Across a restart, and without the kept image.
      const reopened = await temp.reopen();
      assert.equal((await reopened.tasks.read(task.id, alice))?.generation, 5);
      reopened.tasks.clearCache();
      const more = await reopened.tasks.append(task.id, alice, [statusUpdate(task, TaskState.TASK_STATE_COMPLETED)]);
      assert.deepStrictEqual(
        more.logged.map((l) => l.generation),
        [6],
      );
    });

    it('issue 23: the event rows and the task row are written in one transaction: a failing write leaves neither', async () => {
      const { tasks, db } = temp.store;
      const task = newTask({ state: TaskState.TASK_STATE_WORKING });
      // A new task whose writes beside it fail: no task row, no event row.
      await assert.rejects(
        tasks.create(task, alice, async () => {
          throw new Error('the link could not be written');
        }),
        { code: 'store_failed' },
      );
      assert.equal(await tasks.read(task.id, alice), undefined);
      assert.deepStrictEqual(await readLogAfter(db, task.id, 0), []);

      await tasks.create(task, alice);
      await tasks.append(task.id, alice, [statusUpdate(task, TaskState.TASK_STATE_WORKING, reply(task, 'one'))]);
      const row = () =>
        db
          .selectFrom('tasks')
          .select(['version', 'generation', 'status_json', 'updated_at'])
          .where('id', '=', task.id)
          .executeTakeFirstOrThrow();
      const before = await row();
      // An event row in the way of the next generation: the insert of the log fails, after the task's update.
      await db
        .insertInto('task_events')
        .values({ task_id: task.id, generation: 3, event_json: encodeAgentEvent(numbered(task, 0)), created_ms: 0 })
        .execute();
      await assert.rejects(
        tasks.append(task.id, alice, [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, reply(task, 'two'))]),
        { code: 'store_failed' },
      );
      assert.deepStrictEqual(await row(), before, 'the task row is as before');
      assert.deepStrictEqual(
        (await readLogAfter(db, task.id, 0)).map((l) => [l.generation, numberOrUndefined(l)]),
        [
          [1, undefined],
          [2, undefined],
          [3, 0],
        ],
        'no event row but the one in the way',
      );
      for (const reopen of [false, true]) {
        const read = reopen ? (await temp.reopen()).tasks : tasks;
        const snapshot = (await read.read(task.id, alice))!;
        assert.equal(snapshot.generation, 2);
        assert.equal(snapshot.task.status?.state, TaskState.TASK_STATE_WORKING);
        assert.equal(snapshot.task.history.length, 2);
      }
    });

    it('issue 23: a follower gets every event committed after follow resolves, in order, once', async () => {
      const { tasks, feeds } = temp.store;
      const task = newTask({ state: TaskState.TASK_STATE_WORKING });
      await tasks.create(task, alice);
      await tasks.append(task.id, alice, [numbered(task, 0)]);
      const first = await feeds.follow(task.id);
      // Many writers at once, and a modify among them.
      await Promise.all([
        ...Array.from({ length: 20 }, (_, i) =>
          tasks.append(task.id, alice, [numbered(task, 1 + 2 * i), numbered(task, 2 + 2 * i)]),
        ),
        tasks.modify(task.id, alice, () => ({ events: [numbered(task, 100)] })),
      ]);
      const second = await feeds.follow(task.id);
      await tasks.append(task.id, alice, [numbered(task, 101)]);

      const got = await take(first, 42);
      assert.deepStrictEqual(
        got.map((l) => l.generation),
        Array.from({ length: 42 }, (_, i) => i + 3),
        'every generation after the follow, once, in order',
      );
      const numbers = got.map(numberOf).filter((n) => n < 100);
      assert.deepStrictEqual(
        [...numbers].sort((x, y) => x - y),
        Array.from({ length: 40 }, (_, i) => i + 1),
        "every writer's events",
      );
      for (let i = 0; i < numbers.length; i += 2)
        assert.equal(numbers[i + 1], numbers[i]! + 1, "one write's events together, in their order");
      assert.equal(numberOf(got.at(-1)!), 101);
      assert.deepStrictEqual(await take(second, 1), [got.at(-1)]);
      const { logged: marker } = await tasks.append(task.id, alice, [numbered(task, 200)]);
      assert.deepStrictEqual(await take(first, 1), marker, 'nothing else before the marker');
      assert.deepStrictEqual(await take(second, 1), marker, 'nothing else before the marker');

      // A closed follower gets nothing more, and its next read says so; the other goes on.
      first.close();
      assert.equal(await first.next(), undefined);
      await tasks.append(task.id, alice, [numbered(task, 102)]);
      assert.deepStrictEqual((await take(second, 1)).map(numberOf), [102]);
      assert.equal(await first.next(), undefined);
      second.close();
      assert.equal(await second.next(), undefined);
    });

    it('issue 23: pruneLog deletes the events older than what it keeps, and generations go on', async () => {
      let now = Date.parse(at(0));
      const store: Store = await temp.reopen({ now: () => new Date(now) });
      const task = newTask({ state: TaskState.TASK_STATE_WORKING });
      await store.tasks.create(task, alice);
      await store.tasks.append(task.id, alice, [numbered(task, 1)]);
      now += 60_000;
      await store.tasks.append(task.id, alice, [numbered(task, 2)]);
      now += 10_000;
      assert.equal(await pruneLog(store.db, 30_000, now), 2);
      assert.deepStrictEqual(
        (await readLogAfter(store.db, task.id, 0)).map((l) => l.generation),
        [3],
      );
      assert.equal(await pruneLog(store.db, 30_000, now), 0);
      assert.equal((await store.tasks.read(task.id, alice))?.generation, 3, 'the task keeps its generation');
      const follower = await store.feeds.follow(task.id);
      const { logged } = await store.tasks.append(task.id, alice, [numbered(task, 3)]);
      assert.deepStrictEqual(
        logged.map((l) => l.generation),
        [4],
      );
      assert.deepStrictEqual(
        (await take(follower, 1)).map((l) => l.generation),
        [4],
      );
      follower.close();
      assert.equal(await pruneLog(store.db, 0, now + 1), 2);
      assert.deepStrictEqual(await readLogAfter(store.db, task.id, 0), []);
    });
  });
}

function numberOrUndefined(entry: LoggedEvent): number | undefined {
  return (entry.event.data as { metadata?: { n?: number } }).metadata?.n;
}

describe('issue 23: LogSubscription', () => {
  const entry = (generation: number): LoggedEvent => ({
    generation,
    event: numbered({ id: 't', contextId: 'c' }, generation),
  });

  it('fail ends the reader after the events waiting, with the error', async () => {
    const subscription = new LogSubscription(() => undefined);
    subscription.push(entry(1));
    subscription.push(entry(2));
    const error = new Error('the turn was fenced');
    subscription.fail(error);
    subscription.fail(new Error('a second failure'));
    assert.deepStrictEqual(await subscription.next(), entry(1));
    assert.deepStrictEqual(await subscription.next(), entry(2));
    await assert.rejects(subscription.next(), error);
    await assert.rejects(subscription.next(), error, 'and again');
  });

  it('fail wakes a reader waiting, and close ends it, dropping what waits', async () => {
    const failing = new LogSubscription(() => undefined);
    const waiting = failing.next();
    const error = new Error('gone');
    failing.fail(error);
    await assert.rejects(waiting, error);

    let closed = 0;
    const closing = new LogSubscription(() => closed++);
    const reading = closing.next();
    closing.close();
    assert.equal(await reading, undefined);
    closing.push(entry(1));
    closing.close();
    assert.equal(closed, 1, 'told once');
    assert.equal(await closing.next(), undefined);

    const dropping = new LogSubscription(() => undefined);
    dropping.push(entry(1));
    dropping.close();
    assert.equal(await dropping.next(), undefined);
  });
});

describe('issue 23: the task log read across instances (PostgreSQL)', POSTGRESQL.needs, () => {
  let temp: TempStore;
  let a: Store;
  let b: Store;
  beforeEach(async () => {
    temp = await tempStore(POSTGRESQL);
    a = temp.store;
    b = await temp.another();
  });
  afterEach(async () => {
    await temp.dispose();
  });

  it('issue 23: an event another instance wrote is read, in order, before a local one that skipped its generation; woken, the next ones too', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.create(task, alice);
    const follower = await a.feeds.follow(task.id);
    // B writes generation 2; A is not told (no coordination here sends wake-ups).
    await b.tasks.append(task.id, alice, [numbered(task, 1)]);
    // A writes generation 3: it skipped 2, so A's feed reads the log from 2 on.
    await a.tasks.append(task.id, alice, [numbered(task, 2)]);
    assert.deepStrictEqual(
      (await take(follower, 2)).map((l) => [l.generation, numberOf(l)]),
      [
        [2, 1],
        [3, 2],
      ],
    );

    // B writes more; a wake-up (what B's NOTIFY becomes) makes A read them, once each.
    await b.tasks.append(task.id, alice, [numbered(task, 3), numbered(task, 4)]);
    a.feeds.wake(task.id, 5);
    a.feeds.wake(task.id, 5);
    a.feeds.wake(task.id);
    assert.deepStrictEqual(
      (await take(follower, 2)).map((l) => [l.generation, numberOf(l)]),
      [
        [4, 3],
        [5, 4],
      ],
    );
    // A wake-up for what was read already reads nothing; a lost one is made up by `wakeAll`.
    a.feeds.wake(task.id, 4);
    await b.tasks.append(task.id, alice, [numbered(task, 5)]);
    a.feeds.wakeAll();
    await a.tasks.append(task.id, alice, [numbered(task, 6)]);
    assert.deepStrictEqual(
      (await take(follower, 2)).map((l) => [l.generation, numberOf(l)]),
      [
        [6, 5],
        [7, 6],
      ],
    );
    await a.feeds.settled();
    await nextIsMarker(a, follower, task, 7);
    follower.close();
  });

  it('issue 23: a follower on another instance, woken by each write, gets every event of two writers in order, once', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.create(task, alice);
    const c = await temp.another();
    const follower = await c.feeds.follow(task.id);
    // Each instance's writes wake the follower's instance, as the coordination's NOTIFY does.
    for (const writer of [a, b]) writer.events!.onLogged((taskId, generation) => c.feeds.wake(taskId, generation));
    const PER_WRITER = 50;
    await Promise.all(
      [a, b].map(async (writer, w) => {
        for (let i = 0; i < PER_WRITER; i++) await writer.tasks.append(task.id, alice, [numbered(task, 1000 * w + i)]);
      }),
    );
    const got = await take(follower, 2 * PER_WRITER);
    assert.deepStrictEqual(
      got.map((l) => l.generation),
      Array.from({ length: 2 * PER_WRITER }, (_, i) => i + 2),
    );
    for (const w of [0, 1])
      assert.deepStrictEqual(
        got.map(numberOf).filter((n) => Math.floor(n / 1000) === w),
        Array.from({ length: PER_WRITER }, (_, i) => 1000 * w + i),
      );
    await c.feeds.settled();
    await nextIsMarker(c, follower, task, 2000);
    follower.close();
  });

  it('issue 23: a TaskFeeds of its own, on another SqlTaskStore of the schema, reads what the others wrote', async () => {
    const errors: unknown[] = [];
    const feeds = new TaskFeeds(b.db, (error) => errors.push(error));
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await a.tasks.create(task, alice);
    await a.tasks.append(task.id, alice, [numbered(task, 1)]);
    const follower = await feeds.follow(task.id);
    await a.tasks.append(task.id, alice, [numbered(task, 2)]);
    feeds.wake(task.id, 3);
    assert.deepStrictEqual(
      (await take(follower, 1)).map((l) => [l.generation, numberOf(l)]),
      [[3, 2]],
      'from the generation stored when it began',
    );
    feeds.committed(task.id, [{ generation: 3, event: numbered(task, 2) }]);
    await feeds.settled();
    // What it handed out already is not handed out again: the next is the next generation.
    await a.tasks.append(task.id, alice, [numbered(task, 3)]);
    feeds.wake(task.id, 4);
    assert.deepStrictEqual(
      (await take(follower, 1)).map((l) => [l.generation, numberOf(l)]),
      [[4, 3]],
    );
    follower.close();
    assert.deepStrictEqual(errors, []);
  });
});
