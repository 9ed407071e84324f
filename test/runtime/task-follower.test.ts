/**
 * `SubscribeToTask` right as a turn ends (CMD-8): a follower that joins the turn's bus after its
 * final status went out, just before the SDK finishes that bus, stays for what comes next.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { AgentEvent, ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { followTask } from '../../src/runtime/task-follower.js';
import { agentMessage, statusUpdate } from '../../src/runtime/events.js';
import { textOf } from '../../src/wire.js';
import { localEngine } from './engine-support.js';

const task: Task = {
  id: 't1',
  contextId: 'c1',
  status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: new Date().toISOString() },
  history: [
    {
      messageId: 'm1',
      taskId: 't1',
      contextId: 'c1',
      role: Role.ROLE_USER,
      parts: [],
      metadata: {},
      extensions: [],
      referenceTaskIds: [],
    },
  ],
  artifacts: [],
  metadata: {},
};

const store: TaskStore = {
  load: async () => structuredClone(task),
  save: async () => {},
  list: async () => ({ tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 }),
} as unknown as TaskStore;

describe('following a task as its turn ends', () => {
  it("CMD-8: a subscriber that joined a turn's bus after its final status gets the reply posted next", async () => {
    const engine = localEngine();
    const context = new ServerCallContext();
    const turnBus = engine.buses.createOrGetByTaskId(task.id, context); // the turn's, its final status sent already
    const stream = followTask({ taskStore: store, engine }, task.id, context, { follow: 'live', refuseEnded: true });
    assert.equal((await stream.next()).value?.payload?.$case, 'task');
    const next = stream.next();
    // What the SDK does once the execution is over.
    turnBus.finished();
    engine.buses.cleanupByTaskId(task.id, context);
    for (let turns = 0; !engine.buses.getByTaskId(task.id, context); turns += 1) {
      assert.ok(turns < 1000, 'the follower joins the task again');
      await new Promise((resolve) => setImmediate(resolve));
    }
    const reply = statusUpdate(
      task.id,
      task.contextId,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      agentMessage(task.id, task.contextId, 'a later reply'),
    );
    engine.buses.deliverHere(task.id, AgentEvent.statusUpdate(reply));
    const got = await next;
    assert.equal(got.value?.payload?.$case, 'statusUpdate');
    assert.equal(textOf((got.value?.payload?.value as typeof reply).status?.message?.parts), 'a later reply');
    assert.equal((await stream.next()).done, true, 'and ends there, as a stream ends at a status that waits for input');
  });
});
