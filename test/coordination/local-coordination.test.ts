/**
 * `LocalCoordination`, the leases of one process alone: a message's lease (`unlessQueued`) is
 * refused while messages wait in the task's queue, which go first; the queue's own run takes it
 * all the same; a release says whether messages wait (issue 33, as `PostgresCoordination` does).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LocalCoordination } from '../../src/coordination/local-coordination.js';

describe('LocalCoordination: leases and the queue (issue 33)', () => {
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
});
