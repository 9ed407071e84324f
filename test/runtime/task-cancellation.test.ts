import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ServerCallContext, type A2ARequestHandler } from '@a2a-js/sdk/server';
import { TaskCancellation } from '../../src/runtime/task-cancellation.js';
import type { TaskLinks } from '../../src/runtime/task-state.js';
import { HarnessError } from '../../src/errors.js';

function task(id: string, state: TaskState): Task {
  return {
    id,
    contextId: 'ctx',
    status: { state, message: undefined, timestamp: '' },
    history: [],
    artifacts: [],
    metadata: {},
  };
}

describe('CMD-31: canceling a parent cancels its sub-tasks', () => {
  it('goes on past a sub-task it cannot read, reports that one, and treats a sub-task that ended meanwhile as done', async () => {
    const links: Record<string, TaskLinks> = { parent: { children: ['unreadable', 'ended', 'running'] } };
    const lookupFailure = new Error('database is locked');
    const canceled: string[] = [];
    // The engine's cancel, as it answers for each task: the one it could not read, the one that ended.
    const engine = {
      async cancel(id: string) {
        if (id === 'unreadable') throw lookupFailure;
        if (id === 'ended') throw new HarnessError('task_not_cancelable', 'Task ended');
        canceled.push(id);
      },
    };
    const inner = {
      async cancelTask() {
        throw new Error('the SDK cancel is not on the path: it would write CANCELED beside the engine');
      },
      async getTask({ id }: { id: string }) {
        return task(id, canceled.includes(id) ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_WORKING);
      },
    } as unknown as A2ARequestHandler;
    const reported: Array<[unknown, string]> = [];
    const handler = new TaskCancellation(
      inner,
      engine,
      { getLinks: async (id) => links[id] ?? { children: [] } },
      (error, child) => reported.push([error, child]),
    );

    const result = await handler.cancelTask(
      { tenant: '', id: 'parent', metadata: {} } as never,
      new ServerCallContext(),
    );

    assert.equal(result.status?.state, TaskState.TASK_STATE_CANCELED);
    assert.deepEqual(canceled, ['parent', 'running']);
    assert.deepEqual(reported, [[lookupFailure, 'unreadable']]);
  });
});
