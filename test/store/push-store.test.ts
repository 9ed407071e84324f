/**
 * Push notifications' records (issue 24): configs belong to their task's user, and the outbox's
 * deliveries are written with their events, in the same transaction or statement, on both
 * backends (the shared append in one statement included).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import {
  artifact,
  artifactUpdate,
  callContext,
  newTask,
  reply,
  statusUpdate,
  storeBackends,
  tempStore,
  textPart,
} from './helpers.js';
import { readLogAfter } from '../../src/store/task-log.js';
import type { Store } from '../../src/store/index.js';

const alice = callContext('alice');
const aliceScope = { tenant: '', owner: 'alice' };
const bobScope = { tenant: '', owner: 'bob' };
const BOUNDS = { perTask: 10, perUser: 1000 };

async function deliveries(store: Store, taskId: string) {
  return store.db
    .selectFrom('push_deliveries')
    .select(['config_id', 'generation', 'event_json', 'state'])
    .where('task_id', '=', taskId)
    .orderBy('config_id')
    .orderBy('generation')
    .execute();
}

for (const backend of storeBackends) {
  describe(`issue 24: push records on ${backend.name}`, backend.needs, () => {
    it("issue 24: configs are their task's user's; another user sees none and changes none; deleting twice is no error", async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { store } = temp;
      const task = newTask();
      await store.tasks.create(task, alice);
      const config = { taskId: task.id, id: 'c1', url: 'https://example.com/hook', token: 't' };
      assert.equal(await store.push.put(bobScope, config, 1, BOUNDS), 'no_task', "bob cannot add to alice's task");
      assert.equal(await store.push.put(aliceScope, config, 1, BOUNDS), 'stored');
      assert.deepEqual((await store.push.list(bobScope, task.id, { limit: 100 })).configs, []);
      assert.equal(await store.push.get(bobScope, task.id, 'c1'), undefined);
      await store.push.delete(bobScope, task.id, 'c1');
      assert.deepEqual(await store.push.get(aliceScope, task.id, 'c1'), config);
      await store.push.delete(aliceScope, task.id, 'c1');
      await store.push.delete(aliceScope, task.id, 'c1');
      assert.deepEqual((await store.push.list(aliceScope, task.id, { limit: 100 })).configs, []);
    });

    it('issue 24: every logged event owes one delivery per config of its task, written with it; a task without configs owes none', async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { store } = temp;
      const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      const other = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      await store.push.put(
        aliceScope,
        { taskId: task.id, id: 'a', url: 'https://example.com/a', token: '' },
        1,
        BOUNDS,
        true,
      );
      await store.tasks.create(task, alice);
      await store.tasks.create(other, alice);
      await store.push.put(
        aliceScope,
        { taskId: task.id, id: 'b', url: 'https://example.com/b', token: '' },
        2,
        BOUNDS,
      );
      // Several appends: shared, those after the first go in one statement (the kept image).
      for (const target of [task, other]) {
        await store.tasks.append(target.id, alice, [statusUpdate(target, TaskState.TASK_STATE_WORKING)]);
        await store.tasks.append(target.id, alice, [
          artifactUpdate(target, artifact('r', [textPart('one')])),
          artifactUpdate(target, artifact('r', [textPart(' two')]), true),
        ]);
        await store.tasks.append(target.id, alice, [
          statusUpdate(target, TaskState.TASK_STATE_INPUT_REQUIRED, reply(target, 'one two')),
        ]);
      }
      const log = await readLogAfter(store.db, task.id, 0);
      const owed = await deliveries(store, task.id);
      // Config a was there from the start (a new task's config), b from generation 2 on.
      const expected = [
        ...log.map((entry) => ['a', entry.generation]),
        ...log.filter((entry) => entry.generation > 1).map((entry) => ['b', entry.generation]),
      ];
      assert.deepEqual(
        owed.map((row) => [row.config_id, Number(row.generation)]),
        expected,
      );
      const logged = new Map(
        (
          await store.db
            .selectFrom('task_events')
            .select(['generation', 'event_json'])
            .where('task_id', '=', task.id)
            .execute()
        ).map((row) => [Number(row.generation), row.event_json]),
      );
      for (const row of owed) {
        assert.equal(row.event_json, logged.get(Number(row.generation)), 'the event as the log holds it');
        assert.equal(row.state, 'pending');
      }
      assert.deepEqual(await deliveries(store, other.id), []);
      // The deliverer's view: each pair's first pending delivery.
      // Due at once whatever the deliverer's clock says (another instance's may be behind the writer's).
      const heads = await store.push.heads(1, 10);
      assert.deepEqual(heads.map((h) => [h.configId, h.generation]).sort(), [
        ['a', 1],
        ['b', 2],
      ]);
      const due = await store.push.due(task.id, 'b', Date.now(), 2);
      assert.deepEqual(
        due.map((d) => d.generation),
        [2, 3],
      );
      assert.equal(due[0]!.config.url, 'https://example.com/b');
      await store.push.delivered(task.id, 'b', [2]);
      await store.push.attemptFailed(task.id, 'b', 3, { atMs: 2, attempts: 1, firstAttemptMs: 1, error: 'down' });
      assert.equal(await store.push.failedCount(task.id), 1);
      assert.equal(
        (await store.push.due(task.id, 'b', Date.now(), 1))[0]?.generation,
        4,
        'a failed delivery no longer holds the next',
      );
    });

    it('issue 33: a delivery kept as failed is pruned push.keepFailedForMs after its last attempt, oldest first, a bounded batch at a time; pending ones stay', async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { store } = temp;
      const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      await store.push.put(
        aliceScope,
        { taskId: task.id, id: 'a', url: 'https://example.com/a', token: '' },
        1,
        BOUNDS,
        true,
      );
      await store.tasks.create(task, alice);
      for (let i = 0; i < 4; i++)
        await store.tasks.append(task.id, alice, [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED)]);
      const day = 86_400_000;
      const now = 100 * day;
      // Generations 1..5: 1-3 failed 10, 9 and 1 days ago; 4 pending, last tried 30 days ago; 5 pending, never tried.
      const failed = (generation: number, atMs: number) =>
        store.push.attemptFailed(task.id, 'a', generation, {
          atMs,
          attempts: 3,
          firstAttemptMs: atMs - day,
          error: 'down',
        });
      await failed(1, now - 10 * day);
      await failed(2, now - 9 * day);
      await failed(3, now - day);
      await store.push.attemptFailed(task.id, 'a', 4, {
        atMs: now - 30 * day,
        attempts: 1,
        firstAttemptMs: now - 30 * day,
        nextAttemptMs: now - 30 * day,
        error: 'down',
      });
      const left = async () => (await deliveries(store, task.id)).map((row) => [Number(row.generation), row.state]);
      assert.equal(await store.push.pruneFailed(7 * day, 1, now), 1, 'one at most');
      assert.deepEqual(await left(), [
        [2, 'failed'],
        [3, 'failed'],
        [4, 'pending'],
        [5, 'pending'],
      ]);
      assert.equal(await store.push.pruneFailed(7 * day, 1000, now), 1);
      assert.equal(await store.push.pruneFailed(7 * day, 1000, now), 0, 'the failure of a day ago stays');
      assert.deepEqual(await left(), [
        [3, 'failed'],
        [4, 'pending'],
        [5, 'pending'],
      ]);
      assert.equal(await store.push.failedCount(task.id), 1);
    });

    it('a delivery kept as failed is counted after its config is deleted, after a restart too; a task that never had a config counts none', async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      const plain = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      const config = { taskId: task.id, id: 'a', url: 'https://example.com/a', token: '' };
      await temp.store.push.put(aliceScope, config, 1, BOUNDS, true);
      await temp.store.tasks.create(task, alice);
      await temp.store.tasks.create(plain, alice);
      await temp.store.push.attemptFailed(task.id, 'a', 1, { atMs: 2, attempts: 3, firstAttemptMs: 1, error: 'down' });
      await temp.store.push.delete(aliceScope, task.id, 'a');
      assert.equal(await temp.store.push.failedCount(task.id), 1);
      const again = await temp.reopen();
      assert.equal(await again.push.failedCount(task.id), 1, 'known after a restart');
      assert.equal(await again.push.failedCount(plain.id), 0);
    });

    it("issue 33: a pair waiting for a retry puts off all its pending deliveries: heads reads only pairs due, and the timer's next time is the retry's", async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { store } = temp;
      const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      for (const id of ['dead', 'alive'])
        await store.push.put(
          aliceScope,
          { taskId: task.id, id, url: `https://example.com/${id}`, token: '' },
          1,
          BOUNDS,
          true,
        );
      await store.tasks.create(task, alice);
      for (let i = 0; i < 3; i++)
        await store.tasks.append(task.id, alice, [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED)]);
      const now = Date.now() + 1000;
      assert.equal(await store.push.nextDueAfter(now), undefined, 'everything is due');
      await store.push.attemptFailed(task.id, 'dead', 1, {
        atMs: now,
        attempts: 1,
        firstAttemptMs: now,
        nextAttemptMs: now + 60_000,
        error: 'refused',
      });
      const rows = await deliveries(store, task.id);
      assert.equal(rows.length, 8);
      assert.deepEqual(
        (await store.push.heads(now, 10)).map((h) => [h.configId, h.generation]),
        [['alive', 1]],
      );
      assert.equal(await store.push.nextDueAfter(now), now + 60_000);
      assert.deepEqual((await store.push.heads(now + 60_000, 10)).map((h) => [h.configId, h.generation]).sort(), [
        ['alive', 1],
        ['dead', 1],
      ]);
      // Out of retries, the dead pair's next delivery is due at once.
      await store.push.attemptFailed(task.id, 'dead', 1, {
        atMs: now + 60_000,
        attempts: 2,
        firstAttemptMs: now,
        error: 'refused',
      });
      assert.deepEqual((await store.push.heads(now + 60_000, 10)).map((h) => [h.configId, h.generation]).sort(), [
        ['alive', 1],
        ['dead', 2],
      ]);
    });

    it('issue 33: put holds a task to perTask configs and a user to perUser, even when many are created at once; a replaced config is no new one', async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { store } = temp;
      const bounds = { perTask: 3, perUser: 4 };
      const tasks = [newTask(), newTask()];
      for (const task of tasks) await store.tasks.create(task, alice);
      const put = (taskId: string, id: string) =>
        store.push.put(aliceScope, { taskId, id, url: 'https://example.com/hook', token: '' }, 1, bounds);
      const first = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => put(tasks[0]!.id, id)));
      assert.deepEqual(
        first.filter((outcome) => outcome === 'stored').length,
        3,
        `five at once, three stored: ${first.join(', ')}`,
      );
      assert.ok(first.filter((outcome) => outcome !== 'stored').every((outcome) => outcome === 'task_full'));
      const kept = (await store.push.list(aliceScope, tasks[0]!.id, { limit: 10 })).configs.map((c) => c.id);
      assert.equal(kept.length, 3);
      assert.equal(await put(tasks[0]!.id, kept[0]!), 'stored', 'a replaced config');
      assert.equal(await put(tasks[1]!.id, 'x'), 'stored');
      assert.equal(await put(tasks[1]!.id, 'y'), 'user_full');
      assert.equal(
        await store.push.put(bobScope, { taskId: tasks[1]!.id, id: 'z', url: 'https://e.com', token: '' }, 1, bounds),
        'no_task',
      );
      // Pages: in the order made, each page's cursor the last it holds.
      const page1 = await store.push.list(aliceScope, tasks[0]!.id, { limit: 2 });
      const page2 = await store.push.list(aliceScope, tasks[0]!.id, { limit: 2, after: page1.next });
      assert.deepEqual(
        [...page1.configs, ...page2.configs].map((c) => c.id),
        kept,
      );
      assert.ok(page1.next);
      assert.equal(page2.next, undefined);
    });
  });
}
