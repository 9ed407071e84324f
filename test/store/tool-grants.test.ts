/**
 * `/approve always` grants (`store/tool-grants.ts`, TOOL-5) on both backends: per user, per
 * context, per tool; kept across a reopen; seen and revoked by another instance at once.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { storeBackends, tempStore } from './helpers.js';

const alice = { tenant: '', owner: 'alice', contextId: 'c1' };

for (const backend of storeBackends) {
  describe(`tool grants on ${backend.name}`, backend.needs, () => {
    it('TOOL-5 store: a grant holds for that user, context and tool only; granting again changes nothing; revoking takes it back', async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { grants } = temp.store;
      assert.deepEqual(await grants.list(alice), []);
      await grants.grant(alice, ['fx_echo', 'fx_echo']);
      const [first] = await grants.list(alice);
      assert.equal(first!.tool, 'fx_echo');
      assert.ok(!Number.isNaN(Date.parse(first!.grantedAt)), 'with when it was granted');
      await grants.grant(alice, ['fx_echo', 'fx_add']);
      const listed = await grants.list(alice);
      assert.deepEqual(
        listed.map((g) => g.tool),
        ['fx_add', 'fx_echo'],
      );
      assert.equal(listed[1]!.grantedAt, first!.grantedAt, 'granting again keeps the first grant');
      assert.deepEqual(await grants.list({ ...alice, owner: 'bob' }), [], 'another user in the same context has none');
      assert.deepEqual(await grants.list({ ...alice, contextId: 'c2' }), [], 'nor has another context');
      assert.deepEqual(await grants.list({ ...alice, tenant: 't2' }), [], 'nor another tenant');

      const reopened = await temp.reopen();
      assert.deepEqual(
        (await reopened.grants.list(alice)).map((g) => g.tool),
        ['fx_add', 'fx_echo'],
        'kept across a restart',
      );
      assert.equal(
        await reopened.grants.revoke({ ...alice, owner: 'bob' }, 'fx_echo'),
        false,
        "bob cannot revoke alice's",
      );
      assert.equal(await reopened.grants.revoke(alice, 'fx_echo'), true);
      assert.equal(await reopened.grants.revoke(alice, 'fx_echo'), false, 'a second revoke finds nothing');
      assert.deepEqual(
        (await reopened.grants.list(alice)).map((g) => g.tool),
        ['fx_add'],
      );
    });

    if (backend.shared) {
      it('TOOL-5 store: another instance sees a grant and a revoke at once', async (t) => {
        const temp = await tempStore(backend);
        t.after(() => temp.dispose());
        const other = await temp.another();
        await temp.store.grants.grant(alice, ['fx_echo']);
        assert.deepEqual(
          (await other.grants.list(alice)).map((g) => g.tool),
          ['fx_echo'],
        );
        assert.equal(await other.grants.revoke(alice, 'fx_echo'), true);
        assert.deepEqual(await temp.store.grants.list(alice), []);
      });
    }
  });
}
