/**
 * A tool call's time bound stops while its server waits for the user's answer (issue 39):
 * `toolTimeoutMs` bounds the tool's own time, `elicitationTimeoutMs` the person's.
 */
import { describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { CallClock } from '../../src/tools/call-clock.js';

describe('CallClock (issue 39)', () => {
  it('issue 39: the bound does not run while the user is asked, and runs again after', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const clock = new CallClock(1000, new AbortController().signal);
      let answer!: () => void;
      const asked = clock.stopped(() => new Promise<void>((resolve) => (answer = resolve)));
      mock.timers.tick(5000);
      assert.equal(clock.signal.aborted, false, 'a person answering slowly is not the tool timing out');
      answer();
      await asked;
      mock.timers.tick(1000);
      assert.equal(clock.signal.aborted, true);
      assert.equal(clock.timedOut, true);
      clock.stop();
    } finally {
      mock.timers.reset();
    }
  });

  it('issue 39: the outer signal aborts the call, and is not a timeout', () => {
    const outer = new AbortController();
    const clock = new CallClock(1000, outer.signal);
    outer.abort(new Error('turn canceled'));
    assert.equal(clock.signal.aborted, true);
    assert.equal(clock.timedOut, false);
    clock.stop();
  });
});
