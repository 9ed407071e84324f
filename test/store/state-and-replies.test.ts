import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { linkSubtask, message, tempStore, type TempStore } from './helpers.js';

/** The harness's own task state and the command reply log, both durable. */

describe('SqlTaskStateStore', () => {
  let temp: TempStore;
  beforeEach(async () => {
    temp = await tempStore();
  });
  afterEach(async () => {
    await temp.dispose();
  });

  it('stores the task model and the context latest choice', async () => {
    const { state } = temp.store;
    assert.equal(await state.getTaskModel('t1'), undefined);
    assert.equal(await state.getContextModel('c1'), undefined);
    await state.setTaskModel('t1', 'c1', 'local:small');
    await state.setTaskModel('t2', 'c1', 'local:large');
    await state.setTaskModel('t1', 'c1', 'local:medium');
    const reopened = (await temp.reopen()).state;
    assert.equal(await reopened.getTaskModel('t1'), 'local:medium');
    assert.equal(await reopened.getTaskModel('t2'), 'local:large');
    assert.equal(await reopened.getContextModel('c1'), 'local:medium');
  });

  it('adds usage per model and reports it in first-use order', async () => {
    const { state } = temp.store;
    assert.deepStrictEqual(await state.getUsage('t1'), []);
    await state.addUsage('t1', { model: 'zeta', inputTokens: 10, outputTokens: 1 });
    await state.addUsage('t1', { model: 'alpha', inputTokens: 5, outputTokens: 2 });
    await Promise.all([
      state.addUsage('t1', { model: 'zeta', inputTokens: 100, outputTokens: 10 }),
      state.addUsage('t1', { model: 'zeta', inputTokens: 1000, outputTokens: 100 }),
    ]);
    await state.addUsage('t2', { model: 'alpha', inputTokens: 3_000_000_000, outputTokens: 1 });
    await state.addUsage('t2', { model: 'alpha', inputTokens: 3_000_000_000, outputTokens: 1 });
    const reopened = (await temp.reopen()).state;
    assert.deepStrictEqual(await reopened.getUsage('t1'), [
      { model: 'zeta', inputTokens: 1110, outputTokens: 111 },
      { model: 'alpha', inputTokens: 5, outputTokens: 2 },
    ]);
    assert.deepStrictEqual(await reopened.getUsage('t2'), [{ model: 'alpha', inputTokens: 6_000_000_000, outputTokens: 2 }]);
  });

  it('answers from memory what the database holds, with reads and writes running together', async () => {
    const { state } = temp.store;
    for (let round = 0; round < 20; round += 1) {
      // A read started before each write, one after, and reads after both.
      const pending = [state.getTaskModel('t1'), state.getContextModel('c1'), state.getUsage('t1'), state.getLinks('p1')];
      const writes = [
        state.setTaskModel('t1', 'c1', `m${round}`),
        state.addUsage('t1', { model: `m${round % 3}`, inputTokens: 1, outputTokens: 2 }),
        linkSubtask(state, temp.store.db, 'p1', `child${round}`),
      ];
      pending.push(state.getTaskModel('t1'), state.getUsage('t1'), state.getLinks('p1'));
      await Promise.all([...pending, ...writes]);
      assert.equal(await state.getTaskModel('t1'), `m${round}`);
      assert.equal(await state.getContextModel('c1'), `m${round}`);
      assert.equal((await state.getLinks('p1')).children.length, round + 1);
      const total = (await state.getUsage('t1')).reduce((sum, entry) => sum + entry.inputTokens, 0);
      assert.equal(total, round + 1);
    }
    const fromMemory = await state.getUsage('t1');
    fromMemory[0]!.inputTokens = 999; // a caller changing its copy changes nothing kept
    const reopened = (await temp.reopen()).state;
    assert.deepStrictEqual(await state.getUsage('t1'), await reopened.getUsage('t1'));
    assert.deepStrictEqual(await state.getLinks('p1'), await reopened.getLinks('p1'));
  });
});

describe('SqlCommandReplyLog', () => {
  let temp: TempStore;
  beforeEach(async () => {
    temp = await tempStore();
  });
  afterEach(async () => {
    await temp.dispose();
  });

  function reply(text: string): TaskStatusUpdateEvent {
    const answer = message('t1', 'c1', Role.ROLE_AGENT, text);
    answer.metadata = { command: 'status' };
    answer.parts.push({ content: { $case: 'raw', value: Buffer.from('bytes') }, mediaType: 'application/octet-stream', filename: 'b', metadata: {} });
    return {
      taskId: 't1',
      contextId: 'c1',
      status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: answer, timestamp: new Date().toISOString() },
      metadata: { command: 'status' },
    };
  }

  it('returns the recorded reply, keeps the first, survives a restart', async () => {
    const { replies } = temp.store;
    assert.equal(await replies.get('t1', 'm1'), undefined);
    const first = reply('first');
    await replies.put('t1', 'm1', first);
    await replies.put('t1', 'm1', reply('second'));
    const again = await (await temp.reopen()).replies.get('t1', 'm1');
    assert.deepStrictEqual(again, first);
    assert.equal(again?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(await temp.store.replies.get('t2', 'm1'), undefined);
    assert.equal(await temp.store.replies.get('t1', 'm2'), undefined);
  });
});
