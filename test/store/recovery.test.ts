import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import { at, callContext, newTask, statusUpdate, storeBackends, tempStore, type TempStore } from './helpers.js';

/**
 * What recovery of turns a crash cut short reads from the store, on each backend: the tasks left
 * in flight (`listInterrupted`). Ending them (a status update saying the turn was interrupted,
 * decided under the task's lock) is the engine's now (`TurnRecovery`, `src/runtime/recovery.ts`),
 * tested end to end in test/e2e/restart.test.ts and test/e2e/instances*.test.ts.
 */

const alice = callContext('alice', 'acme');

for (const backend of storeBackends) {
  describe(`SqlTaskStore.listInterrupted on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    beforeEach(async () => {
      temp = await tempStore(backend);
    });
    afterEach(async () => {
      await temp.dispose();
    });

    it('lists SUBMITTED and WORKING tasks, with their scope, after a restart; no longer once they ended', async () => {
      const working = newTask({ state: TaskState.TASK_STATE_WORKING, timestamp: at(1) });
      const submitted = newTask({ state: TaskState.TASK_STATE_SUBMITTED, timestamp: at(2) });
      const waiting = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED, timestamp: at(3) });
      const done = newTask({ state: TaskState.TASK_STATE_COMPLETED, timestamp: at(4) });
      for (const task of [working, submitted, waiting, done]) await temp.store.tasks.create(task, alice);

      const store = await temp.reopen();
      assert.deepStrictEqual(
        (await store.tasks.listInterrupted()).map((t) => [t.id, t.contextId, t.state, t.tenant, t.owner]).sort(),
        [
          [working.id, working.contextId, TaskState.TASK_STATE_WORKING, 'acme', 'alice'],
          [submitted.id, submitted.contextId, TaskState.TASK_STATE_SUBMITTED, 'acme', 'alice'],
        ].sort(),
      );
      await store.tasks.append(working.id, alice, [statusUpdate(working, TaskState.TASK_STATE_INPUT_REQUIRED)]);
      assert.deepStrictEqual(
        (await store.tasks.listInterrupted()).map((t) => t.id),
        [submitted.id],
      );
      await store.tasks.append(submitted.id, alice, [statusUpdate(submitted, TaskState.TASK_STATE_WORKING)]);
      assert.deepStrictEqual(
        (await store.tasks.listInterrupted()).map((t) => t.id),
        [submitted.id],
        'a turn going on is still in flight',
      );
      await store.tasks.append(submitted.id, alice, [statusUpdate(submitted, TaskState.TASK_STATE_FAILED)]);
      assert.deepStrictEqual(await (await temp.reopen()).tasks.listInterrupted(), []);
    });

    it('takes only tasks unchanged for unchangedForMs: a turn another instance is ending now is left to it', async () => {
      let now = Date.parse(at(0));
      const store = await temp.reopen({ now: () => new Date(now) });
      const old = newTask({ state: TaskState.TASK_STATE_WORKING });
      await store.tasks.create(old, alice);
      now += 60_000;
      const recent = newTask({ state: TaskState.TASK_STATE_WORKING });
      await store.tasks.create(recent, alice);
      now += 10_000;
      assert.deepStrictEqual(
        (await store.tasks.listInterrupted({ unchangedForMs: 30_000 })).map((t) => t.id),
        [old.id],
      );
      assert.equal((await store.tasks.listInterrupted({ unchangedForMs: 0 })).length, 2);
      // An event written now makes the old task recent too.
      await store.tasks.append(old.id, alice, [statusUpdate(old, TaskState.TASK_STATE_WORKING)]);
      assert.deepStrictEqual(await store.tasks.listInterrupted({ unchangedForMs: 30_000 }), []);
      await assert.rejects(store.tasks.listInterrupted({ unchangedForMs: -1 }), RangeError);
      await assert.rejects(store.tasks.listInterrupted({ unchangedForMs: Number.NaN }), RangeError);
    });

    it('lists the given tasks only, each still in flight', async () => {
      const [a, b, c] = [1, 2, 3].map((i) => newTask({ state: TaskState.TASK_STATE_WORKING, timestamp: at(i) }));
      const ended = newTask({ state: TaskState.TASK_STATE_COMPLETED });
      for (const task of [a!, b!, c!, ended]) await temp.store.tasks.create(task, alice);
      assert.deepStrictEqual(
        (await temp.store.tasks.listInterrupted({ taskIds: [b!.id, ended.id] })).map((t) => t.id),
        [b!.id],
      );
      assert.deepStrictEqual(
        (await temp.store.tasks.listInterrupted({ taskIds: [a!.id, b!.id, ended.id, 'no-such-task'] }))
          .map((t) => t.id)
          .sort(),
        [a!.id, b!.id].sort(),
      );
      assert.deepStrictEqual(await temp.store.tasks.listInterrupted({ taskIds: [] }), []);
    });
  });
}
