/**
 * Readiness (`/readyz`, src/server/health.ts): not ready while the instance drains, nor while its
 * store does not answer; the store's answer is kept a moment, one query at a time, so a flood
 * of probes costs one query. The routes themselves are driven end to end in test/e2e/drain.test.ts.
 */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/log.js';
import { Readiness } from '../../src/server/health.js';
import { tempStore, type TempStore } from '../store/helpers.js';

describe('readiness (/readyz)', () => {
  let temp: TempStore;
  beforeEach(async () => (temp = await tempStore()));
  afterEach(() => temp.dispose());

  it('is ready while the store answers and the instance does not drain; a closed store makes it not ready', async () => {
    const readiness = new Readiness({
      pingStore: () => temp.store.ping(),
      draining: () => false,
      log: silentLogger,
      cacheMs: 0,
    });
    assert.deepEqual(await readiness.check(), { ready: true });
    await temp.store.close();
    assert.deepEqual(await readiness.check(), { ready: false, reason: 'store_unavailable' });
  });

  it('draining fails the very next check, whatever the cache holds', async () => {
    let draining = false;
    const readiness = new Readiness({
      pingStore: () => temp.store.ping(),
      draining: () => draining,
      log: silentLogger,
    });
    assert.deepEqual(await readiness.check(), { ready: true });
    draining = true;
    assert.deepEqual(await readiness.check(), { ready: false, reason: 'draining' });
  });

  it('a flood of probes costs one query while the answer is kept; a kept failure is asked again once it is old', async () => {
    let pings = 0;
    let failing = false;
    const readiness = new Readiness({
      pingStore: async () => {
        pings++;
        if (failing) throw new Error('connection refused');
      },
      draining: () => false,
      log: silentLogger,
      cacheMs: Number.MAX_SAFE_INTEGER,
    });
    const answers = await Promise.all(Array.from({ length: 100 }, () => readiness.check()));
    assert.ok(answers.every((answer) => answer.ready));
    assert.equal(pings, 1, 'one query for a hundred probes at once');
    await readiness.check();
    assert.equal(pings, 1, 'kept');

    const fresh = new Readiness({
      pingStore: async () => {
        pings++;
        if (failing) throw new Error('connection refused');
      },
      draining: () => false,
      log: silentLogger,
      cacheMs: 0,
    });
    failing = true;
    assert.deepEqual(await fresh.check(), { ready: false, reason: 'store_unavailable' });
    failing = false;
    assert.deepEqual(await fresh.check(), { ready: true }, 'asked again: the store is back');
  });

  it('a store that never answers makes it not ready after the timeout, with one query left waiting, not one per probe', async () => {
    let pings = 0;
    const readiness = new Readiness({
      pingStore: () => {
        pings++;
        return new Promise(() => {});
      },
      draining: () => false,
      log: silentLogger,
      cacheMs: 0,
      timeoutMs: 1,
    });
    const answers = await Promise.all(Array.from({ length: 20 }, () => readiness.check()));
    assert.ok(answers.every((answer) => !answer.ready && answer.reason === 'store_unavailable'));
    assert.deepEqual(await readiness.check(), { ready: false, reason: 'store_unavailable' });
    assert.equal(pings, 1, 'the hanging query is waited on again');
  });
});
