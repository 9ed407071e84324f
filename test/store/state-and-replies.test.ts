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

    it("CMD-22, CMD-35: a task's model choice is its own, else its user's latest in its context, read in one statement", async () => {
      const bobsC1 = { ...c1, owner: 'bob' };
      // Read twice: by a store just opened (nothing in memory), then again (what it kept).
      const readTwice = async (check: (state: TempStore['store']['state']) => Promise<void>) => {
        const { state } = await temp.reopen();
        await check(state);
        await check(state);
      };
      await readTwice(async (state) => {
        assert.equal(await state.getModelChoice('t1', c1), undefined);
        assert.equal(await state.getModelChoice('t1', undefined), undefined);
      });
      await temp.store.state.setTaskModel('t0', c1, 'local:small');
      await readTwice(async (state) => {
        assert.equal(await state.getModelChoice('t1', c1), 'local:small');
        assert.equal(await state.getModelChoice('t1', bobsC1), undefined);
        assert.equal(await state.getModelChoice('t1', undefined), undefined);
      });
      await temp.store.state.setTaskModel('t1', undefined, 'local:large');
      await readTwice(async (state) => {
        assert.equal(await state.getModelChoice('t1', c1), 'local:large');
        assert.equal(await state.getModelChoice('t1', undefined), 'local:large');
      });
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

    it("keeps each task's last model call apart from its totals (what /context shows)", async () => {
      const { state } = temp.store;
      assert.equal(await state.getLastUsage('t1'), undefined);
      await state.addUsage('t1', { model: 'zeta', inputTokens: 10, outputTokens: 1 });
      assert.deepStrictEqual(await state.getLastUsage('t1'), { model: 'zeta', inputTokens: 10, outputTokens: 1 });
      await state.addUsage('t1', { model: 'alpha', inputTokens: 7, outputTokens: 2 });
      await state.addUsage('t2', { model: 'zeta', inputTokens: 99, outputTokens: 9 });
      const last = await state.getLastUsage('t1');
      assert.deepStrictEqual(last, { model: 'alpha', inputTokens: 7, outputTokens: 2 });
      last!.inputTokens = 0; // a caller changing its copy changes nothing kept
      const fromRows = (await temp.another()).state;
      assert.deepStrictEqual(await state.getLastUsage('t1'), await fromRows.getLastUsage('t1'));
      const reopened = (await temp.reopen()).state;
      assert.deepStrictEqual(await reopened.getLastUsage('t1'), { model: 'alpha', inputTokens: 7, outputTokens: 2 });
      assert.equal(await reopened.getLastUsage('t3'), undefined);
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

    const accepted = (taskId: string, reply?: TaskStatusUpdateEvent) => ({
      kind: 'accepted',
      outcome: { taskId, reply },
    });
    const isNew = (idReused = false) => ({ kind: 'new', idReused });

    for (const shared of [true, false]) {
      // Shared (other instances on the database) a claim is recorded first; alone, only once accepted.
      const mode = shared ? 'shared' : 'alone';
      const claimsOn = (store: { db: TempStore['store']['db'] }, now?: () => number) =>
        new SqlMessageClaimStore(store.db, 'instance-a', { shared, now });

      it(`CMD-34 (${mode}): a message (id and content) is new once per user; once accepted it answers with its outcome, the first kept, after a restart too`, async () => {
        const claims = claimsOn(temp.store);
        assert.deepStrictEqual(await claims.claim(alice, 'm1', 'd1'), isNew(), 'a new id');
        const first = reply('first');
        await claims.accept(alice, 'm1', 'd1', { taskId: 't1', reply: first });
        await claims.accept(alice, 'm1', 'd1', { taskId: 't2', reply: reply('second') });
        assert.deepStrictEqual(await claims.claim(bob, 'm1', 'd1'), isNew(), "bob's m1 is not alice's");
        const again = await claimsOn(await temp.reopen()).claim(alice, 'm1', 'd1');
        assert.deepStrictEqual(again, accepted('t1', first));
        assert.equal(
          again.kind === 'accepted' && again.outcome.reply?.status?.state,
          TaskState.TASK_STATE_INPUT_REQUIRED,
        );
        await claimsOn(temp.store).accept(alice, 'm2', 'd3', { taskId: 't3' });
        const m2 = await claimsOn(temp.store).claim(alice, 'm2', 'd3');
        if (shared) assert.deepStrictEqual(m2, isNew(), 'shared, accepting a message never claimed records nothing');
        else assert.deepStrictEqual(m2, accepted('t3'), 'alone, the claim is recorded as it is accepted');
      });

      it(`CMD-34 (${mode}): one id with other content is another message, with its own claim; an unchanged resend of each gets its own outcome`, async () => {
        const claims = claimsOn(temp.store);
        await claims.claim(alice, 'm1', 'd1');
        await claims.accept(alice, 'm1', 'd1', { taskId: 't1' });
        assert.deepStrictEqual(
          await claims.claim(alice, 'm1', 'd2'),
          isNew(true),
          'new, its id known with other content',
        );
        await claims.accept(alice, 'm1', 'd2', { taskId: 't2' });
        const reopened = claimsOn(await temp.reopen());
        assert.deepStrictEqual(await reopened.claim(alice, 'm1', 'd1'), accepted('t1'));
        assert.deepStrictEqual(await reopened.claim(alice, 'm1', 'd2'), accepted('t2'));
        assert.deepStrictEqual(await reopened.claim(bob, 'm1', 'd3'), isNew(false), "alice's ids are not bob's");
      });

      it(`CMD-34 (${mode}): an ordinary message has no reply; a released or never accepted claim frees its message`, async () => {
        const claims = claimsOn(temp.store);
        await claims.claim(alice, 'turn', 'd1');
        await claims.accept(alice, 'turn', 'd1', { taskId: 't1' });
        assert.deepStrictEqual(await claims.claim(alice, 'turn', 'd1'), accepted('t1'));
        await claims.claim(alice, 'refused', 'd1');
        await claims.release(alice, 'refused', 'd1');
        assert.deepStrictEqual(await claims.claim(alice, 'refused', 'd1'), isNew());
        await claims.claim(alice, 'cut', 'd1'); // and the process stops before it is accepted
        const reopened = claimsOn(await temp.reopen());
        assert.deepStrictEqual(await reopened.claim(alice, 'cut', 'd1'), isNew(), 'taken over');
        await reopened.accept(alice, 'cut', 'd1', { taskId: 't9' });
        assert.deepStrictEqual(await reopened.claim(alice, 'cut', 'd1'), accepted('t9'));
        await reopened.release(alice, 'turn', 'd1');
        assert.deepStrictEqual(
          await reopened.claim(alice, 'turn', 'd1'),
          accepted('t1'),
          'an accepted claim is never released',
        );
      });

      it(`CMD-34 (${mode}): claims older than the retention time are pruned, oldest first, a bounded batch a pass`, async () => {
        let now = 1_000_000;
        const claims = claimsOn(temp.store, () => now);
        for (const id of ['a', 'b', 'c']) {
          await claims.claim(alice, id, 'd1');
          await claims.accept(alice, id, 'd1', { taskId: `t-${id}` });
          now += 1000;
        }
        // a at 1,000,000, b at 1,001,000, c at 1,002,000; the retention is 10 s.
        now = 1_011_500;
        assert.equal(await claims.prune(10_000, 1), 1, 'one a pass');
        assert.equal(await claims.prune(10_000, 100), 1, 'b too; c is younger than 10 s');
        assert.equal(await claims.prune(10_000, 100), 0);
        assert.deepStrictEqual(await claims.claim(alice, 'a', 'd1'), isNew(), 'a is forgotten: sent again, it is new');
        assert.deepStrictEqual(await claims.claim(alice, 'c', 'd1'), accepted('t-c'), 'c is still a resend');
      });
    }

    it('CMD-34: alone, a claim an earlier process recorded but never accepted is taken over at acceptance', async () => {
      await claimsShared(temp.store).claim(alice, 'old', 'd1');
      const alone = new SqlMessageClaimStore(temp.store.db, 'instance-b', { shared: false });
      assert.deepStrictEqual(await alone.claim(alice, 'old', 'd1'), isNew());
      await alone.accept(alice, 'old', 'd1', { taskId: 't2' });
      assert.deepStrictEqual(await alone.claim(alice, 'old', 'd1'), accepted('t2'));
    });

    it('CMD-13, CMD-34: a claim not yet accepted is pending for another instance while its claimant lives, and taken over once it is gone', async () => {
      const here = new SqlMessageClaimStore(temp.store.db, 'instance-a', { shared: true });
      const there = new SqlMessageClaimStore(temp.store.db, 'instance-b', { shared: true });
      // Instance a is alive: it has a row in `instances`, as its coordination keeps one.
      await temp.store.db.insertInto('instances').values({ id: 'instance-a', heartbeat: 0 }).execute();
      assert.deepStrictEqual(await here.claim(alice, 'slow', 'd1'), isNew());
      assert.deepStrictEqual(await there.claim(alice, 'slow', 'd1'), { kind: 'pending' }, 'still going on a');
      assert.deepStrictEqual(await there.claim(alice, 'slow', 'd2'), isNew(true), 'other content is not held up');
      await temp.store.db.deleteFrom('instances').where('id', '=', 'instance-a').execute();
      assert.deepStrictEqual(await there.claim(alice, 'slow', 'd1'), isNew(), 'a is gone: b takes it over');
      assert.deepStrictEqual(
        await here.claim(alice, 'slow', 'd1'),
        isNew(),
        'b is not in `instances` either: the claim is free to take',
      );
    });
  });
}
