import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { Subtasks } from '../../src/runtime/subtasks.js';
import { TaskModels, type ModelOffer } from '../../src/runtime/task-models.js';
import { localEngine } from './engine-support.js';
import { callContext, newTask, tempStore, type TempStore } from '../store/helpers.js';

const offer: ModelOffer = {
  list: () => [{ id: 'builtin:echo', provider: 'builtin' } as never],
  has: (id) => id === 'builtin:echo',
  defaultModel: 'builtin:echo',
};

describe('CMD-30: a sub-task that cannot be started', () => {
  let temp: TempStore;
  beforeEach(async () => {
    temp = await tempStore();
  });
  afterEach(() => temp.dispose());

  it('ends FAILED at once, saying so, rather than stay SUBMITTED with no turn to run it; the error goes to the caller', async () => {
    const alice = callContext('alice');
    const parent = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.save(parent, alice);
    const refusal = new Error('the turn could not be sent');
    const subtasks = new Subtasks({
      engine: localEngine(temp.store.tasks),
      taskStore: temp.store.tasks,
      state: temp.store.state,
      records: temp.store.subtasks,
      models: new TaskModels(offer, temp.store.state),
      offer,
      turns: { sendMessageStream: () => ({ next: () => Promise.reject(refusal) }) } as unknown as A2ARequestHandler,
      onStreamError: () => {},
    });

    await assert.rejects(subtasks.start(parent, 'Summarise', { callContext: alice }), (error) => error === refusal);

    const [childId] = (await temp.store.state.getLinks(parent.id)).children;
    assert.ok(childId, 'the sub-task was stored and linked');
    const child = await temp.store.tasks.load(childId, alice);
    assert.equal(child?.status?.state, TaskState.TASK_STATE_FAILED);
    assert.match(
      child?.status?.message?.parts[0]?.content?.$case === 'text' ? child.status.message.parts[0].content.value : '',
      /could not be started/,
    );
  });
});
