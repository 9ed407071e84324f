/**
 * A hook's idempotency keys in the store (`schedule-store.ts`, migration 0024), on both backends:
 * a key claims one run per hook; its repeat is answered with that run, writing nothing; another
 * hook, another key or no key claims anew; a key kept past its time is free again, at once in the
 * claim and for good once pruned; a run removed (refused before it started) frees its key.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ScheduleRun, StoredSchedule } from '../../src/schedule-ports.js';
import { storeBackends, tempStore } from './helpers.js';

const KEPT_MS = 60_000;
const T0 = 1_800_000_000_000;

function hook(id: string): StoredSchedule {
  return {
    id,
    tenant: '',
    owner: 'alice',
    authenticated: true,
    contextId: 'c1',
    originTaskId: 't1',
    newContext: false,
    model: 'fixture:small',
    prompt: 'triage',
    kind: 'hook',
    spec: '',
    timeZone: 'UTC',
    paused: false,
    createdMs: T0,
    nextDueMs: undefined,
    hookSha256: '0'.repeat(64),
    pushConfigs: [],
  };
}

function run(scheduleId: string, at: number, idempotencyKey?: string): ScheduleRun {
  return {
    scheduleId,
    dueMs: at,
    state: 'claimed',
    instanceId: 'i1',
    taskId: randomUUID(),
    claimedMs: at,
    missed: 1,
    input: { text: 'body' },
    ...(idempotencyKey !== undefined && { idempotencyKey }),
  };
}

for (const backend of storeBackends) {
  describe(`hooks' idempotency keys on ${backend.name}`, backend.needs, () => {
    it('a key claims one run per hook; a repeat is answered with it and writes nothing; another key, hook or none claims anew', async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { schedules } = temp.store;
      await schedules.add(hook('s0000000001'), 10);
      await schedules.add(hook('s0000000002'), 10);
      const first = await schedules.claimHookRun(run('s0000000001', T0, 'k1'), KEPT_MS);
      assert.ok('claimed' in first);
      // The same millisecond, the same key: the first run, not a claim moved on by a millisecond.
      const again = await schedules.claimHookRun(run('s0000000001', T0, 'k1'), KEPT_MS);
      assert.ok('first' in again);
      assert.equal(again.first.taskId, first.claimed.taskId);
      assert.deepEqual(again.first.input, { text: 'body' });
      assert.equal(again.first.idempotencyKey, 'k1');
      const later = await schedules.claimHookRun(run('s0000000001', T0 + KEPT_MS, 'k1'), KEPT_MS);
      assert.ok('first' in later, 'kept through its whole time');
      assert.equal(later.first.taskId, first.claimed.taskId);
      for (const other of [
        run('s0000000001', T0, 'k2'),
        run('s0000000002', T0, 'k1'),
        run('s0000000001', T0),
        run('s0000000001', T0),
      ]) {
        const claim = await schedules.claimHookRun(other, KEPT_MS);
        assert.ok('claimed' in claim, JSON.stringify(other));
      }
      const latest = await schedules.latest(['s0000000001', 's0000000002']);
      assert.equal(latest.get('s0000000002')?.run?.idempotencyKey, 'k1');
      // Paused, a repeat still names its run; a new key is refused.
      await schedules.setPaused({ tenant: '', owner: 'alice' }, 's0000000001', true, undefined);
      const paused = await schedules.claimHookRun(run('s0000000001', T0 + 1, 'k1'), KEPT_MS);
      assert.ok('first' in paused);
      assert.deepEqual(await schedules.claimHookRun(run('s0000000001', T0 + 1, 'k3'), KEPT_MS), {
        refused: 'paused',
      });
    });

    it('a key past its time is free again: at once in the claim, and cleared by pruning; a run unclaimed frees its key', async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { schedules } = temp.store;
      await schedules.add(hook('s0000000001'), 10);
      const first = await schedules.claimHookRun(run('s0000000001', T0, 'k1'), KEPT_MS);
      assert.ok('claimed' in first);
      const expired = await schedules.claimHookRun(run('s0000000001', T0 + KEPT_MS + 1, 'k1'), KEPT_MS);
      assert.ok('claimed' in expired, 'claimed anew once the first is past its time');
      assert.notEqual(expired.claimed.taskId, first.claimed.taskId);
      await schedules.claimHookRun(run('s0000000001', T0 + 10, 'k2'), KEPT_MS);
      // Pruned: the keys older than KEPT_MS at that time go, the younger stay; the runs all stay.
      assert.equal(await schedules.pruneHookKeys(KEPT_MS, 100, T0 + KEPT_MS + 20), 1);
      assert.equal(await schedules.pruneHookKeys(KEPT_MS, 100, T0 + KEPT_MS + 20), 0);
      const kept = await schedules.claimHookRun(run('s0000000001', T0 + KEPT_MS + 20, 'k1'), KEPT_MS);
      assert.ok('first' in kept);
      assert.equal(kept.first.taskId, expired.claimed.taskId);
      assert.ok('claimed' in (await schedules.claimHookRun(run('s0000000001', T0 + 30, 'k3'), KEPT_MS)));
      assert.equal(await schedules.pruneHookKeys(KEPT_MS, 1, T0 + 10 * KEPT_MS), 1, 'at most the limit');
      assert.equal(await schedules.pruneHookKeys(KEPT_MS, 1, T0 + 10 * KEPT_MS), 1);
      assert.equal(await schedules.pruneHookKeys(KEPT_MS, 1, T0 + 10 * KEPT_MS), 0);
      // A run refused before it started is unclaimed, and its key with it.
      const refused = await schedules.claimHookRun(run('s0000000001', T0 + 11 * KEPT_MS, 'k4'), KEPT_MS);
      assert.ok('claimed' in refused);
      await schedules.unclaim(refused.claimed);
      const retried = await schedules.claimHookRun(run('s0000000001', T0 + 11 * KEPT_MS, 'k4'), KEPT_MS);
      assert.ok('claimed' in retried);
      assert.notEqual(retried.claimed.taskId, refused.claimed.taskId);
    });

    if (backend.shared) {
      it('two instances claiming with the same key at once: one claim lands, the other is answered with it', async (t) => {
        const temp = await tempStore(backend);
        t.after(() => temp.dispose());
        const other = await temp.another();
        await temp.store.schedules.add(hook('s0000000001'), 10);
        for (let i = 0; i < 20; i++) {
          const key = `together-${i}`;
          const answers = await Promise.all([
            temp.store.schedules.claimHookRun(run('s0000000001', T0 + i, key), KEPT_MS),
            other.schedules.claimHookRun(run('s0000000001', T0 + i + (i % 2), key), KEPT_MS),
          ]);
          const claimed = answers.flatMap((a) => ('claimed' in a ? [a.claimed] : []));
          const firsts = answers.flatMap((a) => ('first' in a ? [a.first] : []));
          assert.equal(claimed.length, 1, key);
          assert.equal(firsts[0]?.taskId, claimed[0]!.taskId, key);
        }
      });
    }
  });
}
