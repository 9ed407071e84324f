import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState } from '@a2a-js/sdk';
import { send, startTestHarness, textOf, type TestHarness } from './support.js';

let h: TestHarness;

before(async () => {
  h = await startTestHarness({ script: { reply: 'one and done' }, config: { turnEndState: 'completed' } });
});

after(async () => {
  await h?.close();
});

describe('turnEndState: "completed"', () => {
  it('ends each turn COMPLETED; the next message in the context starts a new task on the chosen model', async () => {
    const client = await h.client('JSONRPC');
    const created = await send(client, '/model fixture:large');
    const task = await send(client, 'Question', { taskId: created.id });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(task.status?.message), 'one and done');
    await assert.rejects(send(client, 'More', { taskId: task.id }), /terminal state/);
    const next = await send(client, 'A new question', { contextId: task.contextId });
    assert.notEqual(next.id, task.id);
    assert.equal(h.chatRequests().at(-1).model, 'large');
  });
});
