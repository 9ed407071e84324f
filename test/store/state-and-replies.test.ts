import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { linkSubtask, message, storeBackends, tempStore, type TempStore } from './helpers.js';
import { SqlMessageClaimStore } from '../../src/store/index.js';

/** The harness's own task state and the message claims (command replies among them), all durable, on each backend. */

const c1 = { tenant: '', owner: 'alice', contextId: 'c1' };

for (const backend of storeBackends) {
  describe(`SqlTaskStateStore on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    beforeEach(async () => {
      temp = await tempStore(backend);
    });
    afterEach(async () => {
      await temp.dispose();
    });

    it('stores the task model and the context latest choice', async () => {
      const { state } = temp.store;
      assert.equal(await state.getTaskModel('t1'), undefined);
      assert.equal(await state.getContextModel(c1), undefined);
      await state.setTaskModel('t1', c1, 'local:small');
      await state.setTaskModel('t2', c1, 'local:large');
      await state.setTaskModel('t1', c1, 'local:medium');
      const reopened = (await temp.reopen()).state;
      assert.equal(await reopened.getTaskModel('t1'), 'local:medium');
      assert.equal(await reopened.getTaskModel('t2'), 'local:large');
      assert.equal(await reopened.getContextModel(c1), 'local:medium');
    });

    it('CMD-35: keeps the model last chosen in a context per user: another user naming the same context neither sees nor changes it', async () => {
      const { state } = temp.store;
      const bobsC1 = { ...c1, owner: 'bob' };
      const otherTenant = { ...c1, tenant: 'acme' };
      await state.setTaskModel('t1', c1, 'local:small');
      assert.equal(await state.getContextModel(bobsC1), undefined);
      assert.equal(await state.getContextModel(otherTenant), undefined);
      await state.setTaskModel('t2', bobsC1, 'local:large');
      // This store, and another on the same database (a restart, or another instance).
      for (const read of [state, (await temp.another()).state]) {
        assert.equal(await read.getContextModel(c1), 'local:small');
        assert.equal(await read.getContextModel(bobsC1), 'local:large');
      }
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
      assert.deepStrictEqual(await reopened.getUsage('t2'), [
        { model: 'alpha', inputTokens: 6_000_000_000, outputTokens: 2 },
      ]);
    });

    it('answers from memory what the database holds, with reads and writes running together', async () => {
      const { state } = temp.store;
      for (let round = 0; round < 20; round += 1) {
        // A read started before each write, one after, and reads after both.
        const pending = [
          state.getTaskModel('t1'),
          state.getContextModel(c1),
          state.getUsage('t1'),
          state.getLinks('p1'),
        ];
        const writes = [
          state.setTaskModel('t1', c1, `m${round}`),
          state.addUsage('t1', { model: `m${round % 3}`, inputTokens: 1, outputTokens: 2 }),
          linkSubtask(state, temp.store.db, 'p1', `child${round}`),
        ];
        pending.push(state.getTaskModel('t1'), state.getUsage('t1'), state.getLinks('p1'));
        await Promise.all([...pending, ...writes]);
        assert.equal(await state.getTaskModel('t1'), `m${round}`);
        assert.equal(await state.getContextModel(c1), `m${round}`);
        assert.equal((await state.getLinks('p1')).children.length, round + 1);
        const total = (await state.getUsage('t1')).reduce((sum, entry) => sum + entry.inputTokens, 0);
        assert.equal(total, round + 1);
      }
      const fromMemory = await state.getUsage('t1');
      fromMemory[0]!.inputTokens = 999; // a caller changing its copy changes nothing kept
      const fromRows = (await temp.another()).state;
      assert.deepStrictEqual(await state.getUsage('t1'), await fromRows.getUsage('t1'));
      assert.deepStrictEqual(await state.getLinks('p1'), await fromRows.getLinks('p1'));
    });
  });
}

for (const backend of storeBackends) {
  describe(`SqlMessageClaimStore on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    beforeEach(async () => {
      temp = await tempStore(backend);
    });
    afterEach(async () => {
      await temp.dispose();
    });

    const alice = { tenant: '', owner: 'alice' };
    const claimsShared = (store: { db: TempStore['store']['db'] }) =>
      new SqlMessageClaimStore(store.db, 'instance-a', { shared: true });
    const bob = { tenant: '', owner: 'bob' };

    function reply(text: string): TaskStatusUpdateEvent {
      const answer = message('t1', 'c1', Role.ROLE_AGENT, text);
      answer.metadata = { command: 'status' };
      answer.parts.push({
        content: { $case: 'raw', value: Buffer.from('bytes') },
        mediaType: 'application/octet-stream',
        filename: 'b',
        metadata: {},
      });
      return {
        taskId: 't1',
        contextId: 'c1',
        status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: answer, timestamp: new Date().toISOString() },
        metadata: { command: 'status' },
      };
    }

    for (const shared of [true, false]) {
      // Shared (other instances on the database) a claim is recorded first; alone, only once accepted.
      const mode = shared ? 'shared' : 'alone';
      const claimsOn = (store: { db: TempStore['store']['db'] }) =>
        new SqlMessageClaimStore(store.db, 'instance-a', { shared });

      it(`CMD-34 (${mode}): a claim is new once per user and id; once accepted it answers with its outcome, the first kept, after a restart too`, async () => {
        const claims = claimsOn(temp.store);
        assert.equal(await claims.claim(alice, 'm1', 'd1'), undefined, 'a new id');
        const first = reply('first');
        await claims.accept(alice, 'm1', 'd1', { taskId: 't1', reply: first });
        await claims.accept(alice, 'm1', 'd2', { taskId: 't2', reply: reply('second') });
        assert.equal(await claims.claim(bob, 'm1', 'd1'), undefined, "bob's m1 is not alice's");
        const again = await claimsOn(await temp.reopen()).claim(alice, 'm1', 'd2');
        assert.deepStrictEqual(again, { digest: 'd1', outcome: { taskId: 't1', reply: first } });
        assert.equal(again?.outcome?.reply?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
        await claimsOn(temp.store).accept(alice, 'm2', 'd3', { taskId: 't3' });
        const m2 = await claimsOn(temp.store).claim(alice, 'm2', 'd3');
        if (shared) assert.equal(m2, undefined, 'shared, accepting an id never claimed records nothing');
        else
          assert.deepStrictEqual(
            m2,
            { digest: 'd3', outcome: { taskId: 't3', reply: undefined } },
            'alone, the claim is recorded as it is accepted',
          );
      });

      it(`CMD-34 (${mode}): an ordinary message has no reply; a released or never accepted claim frees its id`, async () => {
        const claims = claimsOn(temp.store);
        await claims.claim(alice, 'turn', 'd1');
        await claims.accept(alice, 'turn', 'd1', { taskId: 't1' });
        assert.deepStrictEqual(await claims.claim(alice, 'turn', 'd1'), {
          digest: 'd1',
          outcome: { taskId: 't1', reply: undefined },
        });
        await claims.claim(alice, 'refused', 'd1');
        await claims.release(alice, 'refused');
        assert.equal(await claims.claim(alice, 'refused', 'd2'), undefined);
        await claims.claim(alice, 'cut', 'd1'); // and the process stops before it is accepted
        const reopened = claimsOn(await temp.reopen());
        assert.equal(await reopened.claim(alice, 'cut', 'd2'), undefined, 'taken over, with its new content');
        await reopened.accept(alice, 'cut', 'd2', { taskId: 't9' });
        assert.equal((await reopened.claim(alice, 'cut', 'd1'))?.digest, 'd2');
        await reopened.release(alice, 'turn');
        assert.equal(
          (await reopened.claim(alice, 'turn', 'd1'))?.outcome?.taskId,
          't1',
          'an accepted claim is never released',
        );
      });
    }

    it('CMD-34: alone, a claim an earlier process recorded but never accepted is taken over at acceptance', async () => {
      await claimsShared(temp.store).claim(alice, 'old', 'd1');
      const alone = new SqlMessageClaimStore(temp.store.db, 'instance-b', { shared: false });
      assert.equal(await alone.claim(alice, 'old', 'd2'), undefined);
      await alone.accept(alice, 'old', 'd2', { taskId: 't2' });
      assert.deepStrictEqual(await alone.claim(alice, 'old', 'd1'), {
        digest: 'd2',
        outcome: { taskId: 't2', reply: undefined },
      });
    });

    it('CMD-13, CMD-34: a claim not yet accepted is pending for another instance while its claimant lives, and taken over once it is gone', async () => {
      const here = new SqlMessageClaimStore(temp.store.db, 'instance-a', { shared: true });
      const there = new SqlMessageClaimStore(temp.store.db, 'instance-b', { shared: true });
      // Instance a is alive: it has a row in `instances`, as its coordination keeps one.
      await temp.store.db.insertInto('instances').values({ id: 'instance-a', heartbeat: 0 }).execute();
      assert.equal(await here.claim(alice, 'slow', 'd1'), undefined);
      assert.deepStrictEqual(
        await there.claim(alice, 'slow', 'd1'),
        { digest: 'd1', pending: true },
        'still going on a',
      );
      await temp.store.db.deleteFrom('instances').where('id', '=', 'instance-a').execute();
      assert.equal(await there.claim(alice, 'slow', 'd1'), undefined, 'a is gone: b takes it over');
      assert.deepStrictEqual(
        await here.claim(alice, 'slow', 'd1'),
        undefined,
        'b is not in `instances` either: the claim is free to take',
      );
    });
  });
}
