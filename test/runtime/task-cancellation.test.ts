import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ServerCallContext, type A2ARequestHandler } from '@a2a-js/sdk/server';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { TaskCancellation } from '../../src/runtime/task-cancellation.js';
import type { TaskLinks } from '../../src/runtime/task-state.js';
import { localEngine } from './engine-support.js';

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
    const inner = {
      async cancelTask({ id }: { id: string }) {
        if (id === 'ended') throw new TaskNotCancelableError('Task ended');
        canceled.push(id);
        return task(id, TaskState.TASK_STATE_CANCELED);
      },
      async getTask({ id }: { id: string }) {
        if (id === 'unreadable') throw lookupFailure;
        return task(id, TaskState.TASK_STATE_WORKING);
      },
    } as unknown as A2ARequestHandler;
    const reported: Array<[unknown, string]> = [];
    const handler = new TaskCancellation(
      inner,
      localEngine(),
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
