import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { isHarnessError } from '../../src/errors.js';
import type { Store } from '../../src/store/index.js';
import { insertInstance, insertLease, takeOverInstance } from '../../src/store/turn-leases.js';
import { callContext, message, newTask, storeBackends, tempStore } from './helpers.js';

/**
 * Fencing a turn's writes by its lease's epoch (`turn-leases.ts`, `task-images.ts`): on
 * PostgreSQL, a save made for a turn whose task another turn or a sweeper has taken since is
 * refused with `turn_fenced` and writes nothing; on SQLite one process alone cannot lose a
 * task to another writer, and nothing is checked.
 */

const context = callContext();

/** The task with one more agent message, as a turn's next save would write it. */
function withReply(task: Task, text: string): Task {
  return { ...task, history: [...task.history, message(task.id, task.contextId, Role.ROLE_AGENT, text)] };
}

function texts(task: Task | undefined): string[] {
  return (task?.history ?? []).map((m) => (m.parts[0]?.content?.$case === 'text' ? m.parts[0].content.value : ''));
}

const refusedAsFenced = (error: unknown) => isHarnessError(error) && error.code === 'turn_fenced';

/** A store whose saves of a task are made under the epoch `epochs` holds for it, as the engine's turns give them. */
function fencedBy(store: Store): Map<string, number> {
  const epochs = new Map<string, number>();
  store.tasks.fenceTurns((taskId) => epochs.get(taskId));
  return epochs;
}

for (const backend of storeBackends) {
  describe(`turn fencing on ${backend.name}`, backend.needs, () => {
    if (!backend.shared) {
      it('one process alone: no save is refused, whatever epoch it is made under (no other writer can take a task)', async () => {
        const temp = await tempStore(backend);
        try {
          const epochs = fencedBy(temp.store);
          const task = newTask({ state: TaskState.TASK_STATE_WORKING });
          epochs.set(task.id, 7);
          await temp.store.tasks.save(task, context);
          await temp.store.tasks.save(withReply(task, 'from epoch 7'), context);
          epochs.set(task.id, 3);
          const loaded = (await temp.store.tasks.load(task.id, context))!;
          await temp.store.tasks.save(withReply(loaded, 'from epoch 3'), context);
          assert.deepEqual(texts(await temp.store.tasks.load(task.id, context)), [
            'hello',
            'from epoch 7',
            'from epoch 3',
          ]);
        } finally {
          await temp.dispose();
        }
      });
      return;
    }

    it("a turn's save under an epoch lower than the one a later turn wrote with is refused (turn_fenced) and writes nothing", async () => {
      const temp = await tempStore(backend);
      try {
        const epochs = fencedBy(temp.store);
        const task = newTask({ state: TaskState.TASK_STATE_WORKING });
        epochs.set(task.id, 5);
        await temp.store.tasks.save(task, context);
        const old = (await temp.store.tasks.load(task.id, context))!;
        epochs.set(task.id, 9);
        await temp.store.tasks.save(withReply(old, 'new turn'), context);
        const before = await temp.store.db
          .selectFrom('tasks')
          .select(['version', 'fence_epoch'])
          .where('id', '=', task.id)
          .executeTakeFirstOrThrow();
        assert.equal(Number(before.fence_epoch), 9, 'the row keeps the epoch of the last turn that wrote it');

        epochs.set(task.id, 5);
        await assert.rejects(temp.store.tasks.save(withReply(old, 'stale turn'), context), refusedAsFenced);
        const after = await temp.store.db
          .selectFrom('tasks')
          .select(['version', 'fence_epoch'])
          .where('id', '=', task.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(after, before, 'nothing written');
        temp.store.tasks.clearCache();
        assert.deepEqual(texts(await temp.store.tasks.load(task.id, context)), ['hello', 'new turn']);

        // Writes that are no turn's (replies, notes, recovery) are not fenced.
        epochs.delete(task.id);
        const now = (await temp.store.tasks.load(task.id, context))!;
        await temp.store.tasks.save(withReply(now, 'a note'), context);
        assert.deepEqual(texts(await temp.store.tasks.load(task.id, context)), ['hello', 'new turn', 'a note']);
      } finally {
        await temp.dispose();
      }
    });

    it("a sweeper taking a dead instance's leases fences their tasks: the paused turn's next save is refused, the next lease's turn writes", async () => {
      const temp = await tempStore(backend);
      try {
        const { db } = temp.store;
        const epochs = fencedBy(temp.store);
        const [paused, survivor] = [randomUUID(), randomUUID()];
        await insertInstance(db, paused);
        await insertInstance(db, survivor);
        const task = newTask({ state: TaskState.TASK_STATE_WORKING });
        const first = await insertLease(db, task.id, paused);
        assert.ok(first !== undefined);
        epochs.set(task.id, first);
        await temp.store.tasks.save(task, context);
        assert.equal(await insertLease(db, task.id, survivor), undefined, 'one turn per task');

        // The paused instance's heartbeat is a lease old: the survivor takes its place.
        await db.updateTable('instances').set({ heartbeat: 0 }).where('id', '=', paused).execute();
        assert.deepEqual(await takeOverInstance(db, paused, 1000), [task.id]);
        await assert.rejects(
          temp.store.tasks.save(withReply(task, 'written after the takeover'), context),
          refusedAsFenced,
        );

        const next = await insertLease(db, task.id, survivor);
        assert.ok(next !== undefined && next > first, `a new lease has a greater epoch (${next} > ${first})`);
        epochs.set(task.id, next);
        const stored = (await temp.store.tasks.load(task.id, context))!;
        await temp.store.tasks.save(withReply(stored, 'the next turn'), context);
        assert.deepEqual(texts(await temp.store.tasks.load(task.id, context)), ['hello', 'the next turn']);
      } finally {
        await temp.dispose();
      }
    });
  });
}
