import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { isHarnessError } from '../../src/errors.js';
import { insertInstance, insertLease, takeOverInstance } from '../../src/coordination/turn-leases.js';
import { callContext, newTask, reply, statusUpdate, storeBackends, tempStore, texts } from '../store/helpers.js';

/**
 * Fencing a turn's writes by its lease's epoch (`turn-leases.ts`, `task-images.ts`): on
 * PostgreSQL, an `append` made for a turn (under its epoch) whose task another turn or a sweeper
 * has taken since is refused with `turn_fenced` and writes nothing, its events not logged; on
 * SQLite one process alone cannot lose a task to another writer, and nothing is checked.
 */

const context = callContext();

/** A turn's event: a status update with one more agent message. */
function withReply(task: Task, text: string): AgentExecutionEvent {
  return statusUpdate(task, TaskState.TASK_STATE_WORKING, reply(task, text));
}

const refusedAsFenced = (error: unknown) => isHarnessError(error) && error.code === 'turn_fenced';

for (const backend of storeBackends) {
  describe(`turn fencing on ${backend.name}`, backend.needs, () => {
    if (!backend.shared) {
      it('one process alone: no write is refused, whatever epoch it is made under (no other writer can take a task)', async () => {
        const temp = await tempStore(backend);
        try {
          const task = newTask({ state: TaskState.TASK_STATE_WORKING });
          await temp.store.tasks.create(task, context);
          await temp.store.tasks.append(task.id, context, [withReply(task, 'from epoch 7')], { fence: 7 });
          await temp.store.tasks.append(task.id, context, [withReply(task, 'from epoch 3')], { fence: 3 });
          assert.deepEqual(texts((await temp.store.tasks.load(task.id, context))?.history), [
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

    it("a turn's write under an epoch lower than the one a later turn wrote with is refused (turn_fenced) and writes nothing", async () => {
      const temp = await tempStore(backend);
      try {
        const task = newTask({ state: TaskState.TASK_STATE_WORKING });
        await temp.store.tasks.create(task, context);
        await temp.store.tasks.append(task.id, context, [withReply(task, 'old turn')], { fence: 5 });
        await temp.store.tasks.append(task.id, context, [withReply(task, 'new turn')], { fence: 9 });
        const row = () =>
          temp.store.db
            .selectFrom('tasks')
            .select(['version', 'fence_epoch', 'generation'])
            .where('id', '=', task.id)
            .executeTakeFirstOrThrow();
        const before = await row();
        assert.equal(Number(before.fence_epoch), 9, 'the row keeps the epoch of the last turn that wrote it');
        const events = async () =>
          (await temp.store.db.selectFrom('task_events').select('generation').where('task_id', '=', task.id).execute())
            .length;
        assert.equal(await events(), 3);

        await assert.rejects(
          temp.store.tasks.append(task.id, context, [withReply(task, 'stale turn')], { fence: 5 }),
          refusedAsFenced,
        );
        assert.deepEqual(await row(), before, 'nothing written');
        assert.equal(await events(), 3, 'nothing logged');
        assert.deepEqual(texts((await temp.store.tasks.load(task.id, context))?.history), [
          'hello',
          'old turn',
          'new turn',
        ]);
        temp.store.tasks.clearCache();
        assert.equal((await temp.store.tasks.read(task.id, context))?.generation, Number(before.generation));

        // Writes that are no turn's (replies, notes, recovery) are not fenced.
        await temp.store.tasks.modify(task.id, context, () => ({ events: [withReply(task, 'a note')] }));
        await temp.store.tasks.append(task.id, context, [withReply(task, 'another note')]);
        assert.deepEqual(texts((await temp.store.tasks.load(task.id, context))?.history), [
          'hello',
          'old turn',
          'new turn',
          'a note',
          'another note',
        ]);
      } finally {
        await temp.dispose();
      }
    });

    it("a sweeper taking a dead instance's leases fences their tasks: the paused turn's next write is refused, the next lease's turn writes", async () => {
      const temp = await tempStore(backend);
      try {
        const { db } = temp.store;
        const [paused, survivor] = [randomUUID(), randomUUID()];
        await insertInstance(db, paused);
        await insertInstance(db, survivor);
        const task = newTask({ state: TaskState.TASK_STATE_WORKING });
        const first = await insertLease(db, task.id, paused);
        assert.ok(first !== undefined);
        await temp.store.tasks.create(task, context);
        await temp.store.tasks.append(task.id, context, [withReply(task, 'the first turn')], { fence: first });
        assert.equal(await insertLease(db, task.id, survivor), undefined, 'one turn per task');

        // The paused instance's heartbeat is a lease old: the survivor takes its place.
        await db.updateTable('instances').set({ heartbeat: 0 }).where('id', '=', paused).execute();
        assert.deepEqual(await takeOverInstance(db, paused, 1000), [task.id]);
        await assert.rejects(
          temp.store.tasks.append(task.id, context, [withReply(task, 'written after the takeover')], { fence: first }),
          refusedAsFenced,
        );

        const next = await insertLease(db, task.id, survivor);
        assert.ok(next !== undefined && next > first, `a new lease has a greater epoch (${next} > ${first})`);
        await temp.store.tasks.append(task.id, context, [withReply(task, 'the next turn')], { fence: next });
        assert.deepEqual(texts((await temp.store.tasks.load(task.id, context))?.history), [
          'hello',
          'the first turn',
          'the next turn',
        ]);
      } finally {
        await temp.dispose();
      }
    });
  });
}
