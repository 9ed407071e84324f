/**
 * `LocalCoordination`, the leases of one process alone: a message's lease (`unlessQueued`) is
 * refused while messages wait in the task's queue, which go first; the queue's own run takes it
 * all the same; a release says whether messages wait (issue 33, as `PostgresCoordination` does).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LocalCoordination } from '../../src/coordination/local-coordination.js';

describe('LocalCoordination: leases, the queue (issue 33) and push pairs (issue 36)', () => {
  it("a message's lease is refused while messages wait; the queue's run takes it; a release says whether any wait", async () => {
    const waiting = new Set<string>();
    const leases = new LocalCoordination('alone', async (taskId) => waiting.has(taskId));
    assert.notEqual(await leases.acquireTurn('t', { unlessQueued: true }), undefined, 'no queue: taken');
    assert.equal(await leases.acquireTurn('t'), undefined, 'held');
    waiting.add('t');
    assert.equal(await leases.releaseTurn('t'), true, 'a message waits');
    assert.equal(await leases.acquireTurn('t', { unlessQueued: true }), undefined, 'refused: the queue goes first');
    assert.notEqual(await leases.acquireTurn('t'), undefined, "the queue's run takes it");
    waiting.delete('t');
    assert.equal(await leases.releaseTurn('t'), false, 'none waits');
  });

  it("issue 36: push delivery's leases are their own kind: one per (task, config) pair, apart from the task's turn", async () => {
    const leases = new LocalCoordination('alone');
    assert.equal(await leases.acquirePush('t', 'c1'), true);
    assert.equal(await leases.acquirePush('t', 'c1'), false, 'held');
    assert.equal(await leases.acquirePush('t', 'c2'), true, "another config's pair is free");
    assert.equal(await leases.turnHeld('t'), false, 'a pair holds no turn of its task');
    assert.notEqual(await leases.acquireTurn('t'), undefined, 'nor keeps a turn from it');
    await leases.releasePush('t', 'c1');
    assert.equal(await leases.acquirePush('t', 'c1'), true, 'free again once released');
  });
});
