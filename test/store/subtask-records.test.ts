import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import { callContext, newTask, storeBackends, tempStore, type TempStore } from './helpers.js';

/** Item: starting a sub-task is one transaction (CMD-30): the task, its link and its model, or none of them. */
for (const backend of storeBackends) {
  describe(
    `CMD-30: a sub-task is stored with its link and model in one transaction, on ${backend.name}`,
    backend.needs,
    () => {
      let temp: TempStore;
      const alice = callContext('alice');
      beforeEach(async () => {
        temp = await tempStore(backend);
      });
      afterEach(() => temp.dispose());

      it('stores all three together, as a reopened store reads them', async () => {
        const parent = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
        await temp.store.tasks.create(parent, alice);
        const child = newTask({ contextId: parent.contextId, state: TaskState.TASK_STATE_SUBMITTED });
        await temp.store.subtasks.createSubtask(child, parent.id, 'builtin:stats', alice);

        const reopened = await temp.reopen();
        assert.equal((await reopened.tasks.load(child.id, alice))?.status?.state, TaskState.TASK_STATE_SUBMITTED);
        assert.deepEqual(await reopened.state.getLinks(child.id), { parent: parent.id, children: [] });
        assert.deepEqual((await reopened.state.getLinks(parent.id)).children, [child.id]);
        assert.equal(await reopened.state.getTaskModel(child.id), 'builtin:stats');
      });

      it('leaves no link and no model when the task cannot be stored (its id is taken)', async () => {
        const parent = newTask();
        const taken = newTask();
        await temp.store.tasks.create(parent, alice);
        await temp.store.tasks.create(taken, callContext('bob'));
        await assert.rejects(temp.store.subtasks.createSubtask({ ...taken }, parent.id, 'builtin:stats', alice), {
          code: 'store_failed',
        });

        const reopened = await temp.reopen();
        assert.deepEqual(await reopened.state.getLinks(parent.id), { parent: undefined, children: [] });
        assert.equal(await reopened.state.getTaskModel(taken.id), undefined);
        assert.equal(await temp.store.tasks.load(taken.id, alice), undefined);
      });

      it('leaves no task when the writes beside it fail', async () => {
        const task = newTask({ id: randomUUID() });
        await assert.rejects(
          temp.store.tasks.create(task, alice, async () => {
            throw new Error('the link could not be written');
          }),
          { code: 'store_failed' },
        );
        assert.equal(await (await temp.reopen()).tasks.load(task.id, alice), undefined);
        assert.equal(await temp.store.tasks.load(task.id, alice), undefined);
      });
    },
  );
}
