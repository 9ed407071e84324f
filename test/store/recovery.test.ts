import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState } from '@a2a-js/sdk';
import { at, callContext, newTask, storeBackends, tempStore, type TempStore } from './helpers.js';

const INTERRUPTED = 'The turn was interrupted; send your message again.';

/** Recovery of turns a crash cut short: at start-up, and (shared) of an instance that died; on each backend. */

const alice = callContext('alice', 'acme');

for (const backend of storeBackends) {
  describe(`SqlTaskStore recovery on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    beforeEach(async () => {
      temp = await tempStore(backend);
    });
    afterEach(async () => {
      await temp.dispose();
    });

    it('moves SUBMITTED and WORKING tasks to INPUT_REQUIRED with an agent message, after a restart', async () => {
      const working = newTask({ state: TaskState.TASK_STATE_WORKING, timestamp: at(1) });
      const submitted = newTask({ state: TaskState.TASK_STATE_SUBMITTED, timestamp: at(2) });
      const waiting = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED, timestamp: at(3) });
      const done = newTask({ state: TaskState.TASK_STATE_COMPLETED, timestamp: at(4) });
      for (const task of [working, submitted, waiting, done]) await temp.store.tasks.save(task, alice);

      const store = await temp.reopen();
      assert.deepStrictEqual(
        (await store.tasks.listInterrupted()).map((t) => [t.id, t.state, t.tenant, t.owner]).sort(),
        [
          [working.id, TaskState.TASK_STATE_WORKING, 'acme', 'alice'],
          [submitted.id, TaskState.TASK_STATE_SUBMITTED, 'acme', 'alice'],
        ].sort(),
      );
      assert.equal(await store.tasks.recoverInterrupted(INTERRUPTED), 2);

      for (const task of [working, submitted]) {
        const loaded = (await (await temp.reopen()).tasks.load(task.id, alice))!;
        assert.equal(loaded.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
        const last = loaded.history.at(-1)!;
        assert.equal(loaded.history.length, 2);
        assert.deepStrictEqual(loaded.status?.message, last);
        assert.equal(last.role, Role.ROLE_AGENT);
        assert.match(last.messageId, /^[0-9a-f-]{36}$/);
        assert.equal(last.parts.length, 1);
        assert.equal(last.parts[0]?.content?.value, INTERRUPTED);
        assert.ok(Date.parse(loaded.status!.timestamp!) >= Date.parse(task.status!.timestamp!));
      }
      for (const task of [waiting, done]) {
        assert.deepStrictEqual(await temp.store.tasks.load(task.id, alice), task);
      }
      assert.equal(await temp.store.tasks.recoverInterrupted(INTERRUPTED), 0);
      assert.deepStrictEqual(await temp.store.tasks.listInterrupted(), []);
    });

    it('takes the message text, or a function building the message', async () => {
      const first = newTask({ state: TaskState.TASK_STATE_WORKING });
      await temp.store.tasks.save(first, alice);
      assert.equal(await temp.store.tasks.recoverInterrupted('Send it again, please.'), 1);
      assert.equal(
        (await temp.store.tasks.load(first.id, alice))?.status?.message?.parts[0]?.content?.value,
        'Send it again, please.',
      );

      const second = newTask({ state: TaskState.TASK_STATE_WORKING });
      await temp.store.tasks.save(second, alice);
      let seen = '';
      const count = await temp.store.tasks.recoverInterrupted((task) => {
        seen = task.id;
        return {
          messageId: 'custom-1',
          contextId: task.contextId,
          taskId: task.id,
          role: Role.ROLE_AGENT,
          parts: [],
          metadata: { why: 'restart' },
          extensions: [],
          referenceTaskIds: [],
        };
      });
      assert.equal(count, 1);
      assert.equal(seen, second.id);
      assert.deepStrictEqual((await temp.store.tasks.load(second.id, alice))?.history.at(-1)?.metadata, {
        why: 'restart',
      });
    });

    it('keeps the recovery status even when the stored status lies in the future', async () => {
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const task = newTask({ state: TaskState.TASK_STATE_WORKING, timestamp: future });
      await temp.store.tasks.save(task, alice);
      assert.equal(await temp.store.tasks.recoverInterrupted(INTERRUPTED), 1);
      assert.equal((await temp.store.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    });

    it('takes only tasks unchanged for unchangedForMs: a turn another instance is ending now is left to it', async () => {
      let now = Date.parse(at(0));
      const store = await temp.reopen({ now: () => new Date(now) });
      const old = newTask({ state: TaskState.TASK_STATE_WORKING });
      await store.tasks.save(old, alice);
      now += 60_000;
      const recent = newTask({ state: TaskState.TASK_STATE_WORKING });
      await store.tasks.save(recent, alice);
      now += 10_000;
      assert.deepStrictEqual(
        (await store.tasks.listInterrupted({ unchangedForMs: 30_000 })).map((t) => t.id),
        [old.id],
      );
      assert.equal((await store.tasks.listInterrupted({ unchangedForMs: 0 })).length, 2);
      assert.equal(await store.tasks.recoverInterrupted(INTERRUPTED, undefined, { unchangedForMs: 30_000 }), 1);
      assert.equal((await store.tasks.load(old.id, alice))?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal((await store.tasks.load(recent.id, alice))?.status?.state, TaskState.TASK_STATE_WORKING);
      await assert.rejects(store.tasks.listInterrupted({ unchangedForMs: -1 }), RangeError);
    });

    it('recovers the given tasks only, each still in flight, and leaves the others alone', async () => {
      const [a, b, c] = [1, 2, 3].map(() => newTask({ state: TaskState.TASK_STATE_WORKING }));
      const ended = newTask({ state: TaskState.TASK_STATE_COMPLETED });
      for (const task of [a!, b!, c!, ended]) await temp.store.tasks.save(task, alice);
      assert.deepStrictEqual(
        (await temp.store.tasks.listInterrupted({ taskIds: [b!.id, ended.id] })).map((t) => t.id),
        [b!.id],
      );
      assert.deepStrictEqual(await temp.store.tasks.listInterrupted({ taskIds: [] }), []);
      assert.equal(
        await temp.store.tasks.recoverInterrupted(INTERRUPTED, undefined, {
          taskIds: [a!.id, b!.id, ended.id, 'no-such-task'],
        }),
        2,
      );
      const states = await Promise.all(
        [a, b, c, ended].map(async (t) => (await temp.store.tasks.load(t!.id, alice))?.status?.state),
      );
      assert.deepStrictEqual(states, [
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_WORKING,
        TaskState.TASK_STATE_COMPLETED,
      ]);
    });
  });
}
