import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState } from '@a2a-js/sdk';
import { callContext, message, newTask, storeBackends, tempStore, type TempStore } from './helpers.js';

/** A fork (CMD-37) is stored with its model in one transaction: both, or neither. */
for (const backend of storeBackends) {
  describe(`CMD-37: a fork is stored with its model in one transaction, on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    const alice = callContext('alice');
    beforeEach(async () => {
      temp = await tempStore(backend);
    });
    afterEach(() => temp.dispose());

    it('stores the task, its whole copied history and its model, for its user only', async () => {
      const fork = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      fork.history.push(message(fork.id, fork.contextId, Role.ROLE_AGENT, 'an answer'));
      await temp.store.forks.createFork(fork, 'fixture:large', alice);

      const reopened = await temp.reopen();
      const stored = await reopened.tasks.load(fork.id, alice);
      assert.equal(stored?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.deepEqual(
        stored?.history.map((m) => m.messageId),
        fork.history.map((m) => m.messageId),
      );
      assert.equal(await reopened.state.getTaskModel(fork.id), 'fixture:large');
      assert.equal(await reopened.tasks.load(fork.id, callContext('bob')), undefined);
    });

    it('leaves no model when the task cannot be stored (its id is taken)', async () => {
      const taken = newTask();
      await temp.store.tasks.create(taken, callContext('bob'));
      await assert.rejects(temp.store.forks.createFork({ ...taken }, 'fixture:large', alice), {
        code: 'store_failed',
      });
      const reopened = await temp.reopen();
      assert.equal(await reopened.state.getTaskModel(taken.id), undefined);
      assert.equal(await reopened.tasks.load(taken.id, alice), undefined);
    });
  });
}
