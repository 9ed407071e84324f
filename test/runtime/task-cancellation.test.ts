/**
 * CMD-31: `CancelTask` reaches a task's sub-tasks (`engine.cancel`): the cascade goes on past a
 * sub-task it cannot cancel, reports that one, and takes a sub-task that ended meanwhile as done.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import { callContext, newTask, tempStore } from '../store/helpers.js';
import { localEngine } from './engine-support.js';
import type { TaskLinks } from '../../src/ports.js';

describe('CMD-31: canceling a parent cancels its sub-tasks', () => {
  it('CMD-31: goes on past a sub-task it cannot read, reports that one, and treats a sub-task that ended meanwhile as done', async (t) => {
    const temp = await tempStore();
    t.after(() => temp.dispose());
    const alice = callContext('alice');
    const [parent, unreadable, ended, running] = [
      TaskState.TASK_STATE_INPUT_REQUIRED,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_INPUT_REQUIRED,
    ].map((state) => newTask({ state }));
    for (const task of [parent!, unreadable!, ended!, running!]) await temp.store.tasks.create(task, alice);
    const links: Record<string, TaskLinks> = { [parent!.id]: { children: [unreadable!.id, ended!.id, running!.id] } };
    const lookupFailure = new Error('database is locked');
    const tasks = temp.store.tasks;
    const reported: Array<[unknown, string, string | undefined]> = [];
    const engine = localEngine(temp.store, undefined, {
      store: {
        read: tasks.read.bind(tasks),
        load: (id, context) => (id === unreadable!.id ? Promise.reject(lookupFailure) : tasks.load(id, context)),
        create: tasks.create.bind(tasks),
        append: tasks.append.bind(tasks),
        modify: tasks.modify.bind(tasks),
      },
      links: { getLinks: async (id) => links[id] ?? { children: [] } },
      onError: (error, what, taskId) => reported.push([error, what, taskId]),
    });

    await engine.cancel(parent!.id, alice);

    const stateOf = async (id: string) => (await tasks.load(id, alice))?.status?.state;
    assert.equal(await stateOf(parent!.id), TaskState.TASK_STATE_CANCELED);
    assert.equal(await stateOf(running!.id), TaskState.TASK_STATE_CANCELED);
    assert.equal(await stateOf(ended!.id), TaskState.TASK_STATE_COMPLETED, 'an ended sub-task is left as it is');
    assert.equal(await stateOf(unreadable!.id), TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.deepEqual(reported, [[lookupFailure, 'canceling a sub-task of a canceled task', unreadable!.id]]);
  });
});
