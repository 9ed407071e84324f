import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { TurnOpening } from '../../src/runtime/turn/turn-opening.js';
import { statusUpdate } from '../../src/runtime/events.js';

const working = AgentEvent.statusUpdate(statusUpdate('t1', 'c1', TaskState.TASK_STATE_WORKING));
const task = AgentEvent.task({
  id: 't1',
  contextId: 'c1',
  status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: '' },
  history: [],
  artifacts: [],
  metadata: {},
});
const failed = AgentEvent.statusUpdate(statusUpdate('t1', 'c1', TaskState.TASK_STATE_FAILED));

function recorder(): { bus: { publish(event: AgentExecutionEvent): void }; kinds: string[] } {
  const kinds: string[] = [];
  return {
    bus: {
      publish: (event) => kinds.push(event.kind === 'statusUpdate' ? `status ${event.data.status?.state}` : event.kind),
    },
    kinds,
  };
}

describe('TurnOpening', () => {
  it('publishes the task event, then WORKING, once the promise jobs of the turn start are done: after what builds the model request', async () => {
    const { bus, kinds } = recorder();
    new TurnOpening(bus, [task, working]);
    await Promise.resolve().then(() => kinds.push('model request'));
    assert.deepEqual(kinds, ['model request']);
    await nextTurn();
    assert.deepEqual(kinds, ['model request', 'task', `status ${TaskState.TASK_STATE_WORKING}`]);
  });

  it('an event of the turn published sooner (a failure found at once) goes after the opening, which goes out once', async () => {
    const { bus, kinds } = recorder();
    const opening = new TurnOpening(bus, [task, working]);
    opening.publish(failed);
    await nextTurn();
    opening.open();
    assert.deepEqual(kinds, [
      'task',
      `status ${TaskState.TASK_STATE_WORKING}`,
      `status ${TaskState.TASK_STATE_FAILED}`,
    ]);
  });
});
