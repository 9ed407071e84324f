import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import { CommandUsageError } from '../../src/commands/index.js';
import { Subtasks } from '../../src/runtime/subtasks.js';
import { TurnLimit } from '../../src/runtime/turn/turn-limit.js';
import { TaskModels, type ModelOffer } from '../../src/runtime/task-models.js';
import type { TaskEngine } from '../../src/runtime/engine.js';
import { TaskView } from '../../src/runtime/subtask-metadata.js';
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
    await temp.store.tasks.create(parent, alice);
    const refusal = new Error('the turn could not be sent');
    const subtasks = new Subtasks({ ...parts(temp, () => Promise.reject(refusal)) });

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

  it('at the bound on turns in flight, nothing is stored: the command is told, in words, to send again later', async () => {
    const alice = callContext('alice');
    const parent = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.create(parent, alice);
    const limit = new TurnLimit(1);
    limit.take(); // the parent's own turn, say
    let sent = 0;
    const subtasks = new Subtasks({
      ...parts(temp, () => Promise.reject(new Error(`no turn may start: ${++sent}`))),
      limit,
    });

    await assert.rejects(
      subtasks.start(parent, 'Summarise', { callContext: alice }),
      (error) =>
        error instanceof CommandUsageError &&
        /sub-task was not started: this server is at its limit of 1 running turn\. Send the command again/.test(
          error.message,
        ),
    );
    assert.deepEqual((await temp.store.state.getLinks(parent.id)).children, [], 'no sub-task stored');
    assert.equal(sent, 0, 'no turn sent');
  });

  it('a sub-task whose turn the bound refuses after all (another turn took the last place) ends FAILED, saying why', async () => {
    const alice = callContext('alice');
    const parent = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.create(parent, alice);
    const limit = new TurnLimit(1);
    const engine = localEngine(temp.store, undefined, { limit });
    const subtasks = new Subtasks({
      ...parts(temp),
      limit,
      engine: {
        createSubtask: engine.createSubtask.bind(engine),
        post: engine.post.bind(engine),
        settle: engine.settle.bind(engine),
        // Another turn takes the last place between the sub-task's check and its turn's start.
        startTurn: (message, context) => {
          limit.take();
          return engine.startTurn(message, context);
        },
      },
    });

    await assert.rejects(
      subtasks.start(parent, 'Summarise', { callContext: alice }),
      (error) =>
        error instanceof CommandUsageError &&
        /could not start \(it ended failed\): .*limit of 1 running turn\./.test(error.message),
    );
    const [childId] = (await temp.store.state.getLinks(parent.id)).children;
    const child = await temp.store.tasks.load(childId!, alice);
    assert.equal(child?.status?.state, TaskState.TASK_STATE_FAILED);
    const text = child?.status?.message?.parts[0]?.content;
    assert.match(text?.$case === 'text' ? text.value : '', /could not be started\. The server was at its limit/);
  });
});

/** What `Subtasks` needs, on the engine of `temp`; `startTurn` replaces the engine's. */
function parts(temp: TempStore, startTurn?: TaskEngine['startTurn']) {
  const engine = localEngine(temp.store);
  return {
    engine: {
      createSubtask: engine.createSubtask.bind(engine),
      post: engine.post.bind(engine),
      settle: engine.settle.bind(engine),
      startTurn: startTurn ?? engine.startTurn.bind(engine),
    },
    view: new TaskView(temp.store.tasks, temp.store.state),
    state: temp.store.state,
    models: new TaskModels(offer, temp.store.state),
    offer,
  };
}
