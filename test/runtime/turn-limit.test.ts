import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isHarnessError } from '../../src/errors.js';
import { TurnLimit } from '../../src/runtime/turn/turn-limit.js';

describe('the bound on turns in flight (TurnLimit)', () => {
  it('gives places up to the bound, refuses the next with turns_at_limit, and takes again once one is given back', () => {
    const limit = new TurnLimit(2);
    const first = limit.take();
    limit.take();
    assert.equal(limit.inFlight, 2);
    assert.throws(
      () => limit.take(),
      (error) =>
        isHarnessError(error) &&
        error.code === 'turns_at_limit' &&
        /at its limit of 2 running turns\. Send the message again/.test(error.message),
    );
    assert.throws(() => limit.check(), { code: 'turns_at_limit' }, 'check says the same, taking nothing');
    assert.equal(limit.inFlight, 2, 'a refusal takes no place');
    first.release();
    first.release();
    assert.equal(limit.inFlight, 1, 'a place is given back once, however often released');
    limit.check();
    limit.take();
    assert.equal(limit.inFlight, 2);
  });

  it('a turn resumed after /approve takes a place past the bound, and new turns wait for it too', () => {
    const limit = new TurnLimit(1);
    limit.take();
    const resumed = limit.takePastLimit();
    assert.equal(limit.inFlight, 2);
    resumed.release();
    assert.throws(() => limit.take(), { code: 'turns_at_limit' }, 'still at the bound');
  });

  it('a bound below one is a mistake', () => {
    assert.throws(() => new TurnLimit(0), RangeError);
  });
});
