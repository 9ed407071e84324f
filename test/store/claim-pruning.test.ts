/** CMD-34: the record of handled messages is pruned periodically, a bounded batch a pass. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { ClaimPruning } from '../../src/store/index.js';

/** Lets the pass that a timer started run to its end (its promises settle on the real event loop). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ClaimPruning', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('CMD-34: prunes once an interval; a full batch is followed by another pass at once; a failure is reported and the passes go on', async () => {
    const backlog = [3, 3, 1, 0];
    const calls: Array<[number, number]> = [];
    const errors: unknown[] = [];
    const pruned: number[] = [];
    const pruning = new ClaimPruning({
      claims: {
        prune: async (retentionMs, limit) => {
          calls.push([retentionMs, limit]);
          const next = backlog.shift();
          if (next === undefined) throw new Error('database gone');
          return next;
        },
      },
      retentionMs: 86_400_000,
      intervalMs: 60_000,
      batch: 3,
      onError: (error) => errors.push(error),
      onPruned: (count) => pruned.push(count),
    });
    pruning.start();
    mock.timers.tick(59_999);
    await settle();
    assert.equal(calls.length, 0, 'nothing before the first interval');
    mock.timers.tick(1);
    await settle();
    assert.deepEqual(calls, [[86_400_000, 3]]);
    mock.timers.tick(0);
    await settle();
    assert.equal(calls.length, 2, 'a full batch: more may be waiting');
    mock.timers.tick(0);
    await settle();
    assert.equal(calls.length, 3, 'again full');
    mock.timers.tick(0);
    await settle();
    assert.equal(calls.length, 3, 'a partial batch: the backlog is gone, the next pass waits an interval');
    mock.timers.tick(60_000);
    await settle();
    assert.equal(calls.length, 4);
    mock.timers.tick(60_000);
    await settle();
    assert.equal(calls.length, 5);
    assert.equal(errors.length, 1, 'the failed pass is reported');
    mock.timers.tick(60_000);
    await settle();
    assert.equal(calls.length, 6, 'and the next one still runs');
    await pruning.stop();
    mock.timers.tick(600_000);
    await settle();
    assert.equal(calls.length, 6, 'none after stop');
    assert.deepEqual(pruned, [3, 3, 1], 'told of each pass that removed rows (issue 33: the push metric counts them)');
  });
});
