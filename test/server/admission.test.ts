/**
 * Admission (src/server/admission.ts) and the event loop's delay it reads
 * (src/server/event-loop-delay.ts). The routes that use it are driven end to end in
 * test/e2e/admission.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasErrorCode } from '../../src/errors.js';
import { Admission, type AdmissionRefusal } from '../../src/server/admission.js';
import { EventLoopDelay } from '../../src/server/event-loop-delay.js';
import { poll } from '../support/wait.js';

function admission(options: { max?: number; maxDelayMs?: number; delayMs?: () => number; checkFrom?: number } = {}) {
  const refusals: AdmissionRefusal[] = [];
  const gate = new Admission({
    maxRequestsInProgress: options.max ?? 2,
    maxEventLoopDelayMs: options.maxDelayMs ?? 100,
    eventLoopCheckFrom: options.checkFrom ?? 0,
    eventLoopDelayMs: options.delayMs ?? (() => 0),
    onRefused: (reason) => refusals.push(reason),
  });
  return { gate, refusals };
}

describe('admission', () => {
  it('admits up to maxRequestsInProgress; the next is refused (requests_at_limit) and takes no place', () => {
    const { gate, refusals } = admission({ max: 2 });
    const first = gate.admit(true);
    const second = gate.admit(true);
    assert.ok('release' in first && 'release' in second);
    const third = gate.admit(true);
    assert.ok('refused' in third && hasErrorCode(third.refused, 'requests_at_limit'));
    assert.match(third.refused.message, /as many requests as it may \(2\)/);
    assert.equal(gate.inProgress, 2);
    assert.deepEqual(refusals, ['requests_at_limit']);
  });

  it('a place given back admits one more; giving it back twice counts once', () => {
    const { gate } = admission({ max: 1 });
    const first = gate.admit(true);
    assert.ok('release' in first);
    first.release();
    first.release();
    assert.equal(gate.inProgress, 0);
    assert.ok('release' in gate.admit(true));
    assert.ok('refused' in gate.admit(true), 'one place, taken again');
  });

  it('while the event loop lags past maxEventLoopDelayMs, a request is refused (event_loop_lagging); once it keeps up, admitted', () => {
    let delayMs = 150;
    const { gate, refusals } = admission({ maxDelayMs: 100, delayMs: () => delayMs });
    const refused = gate.admit(true);
    assert.ok('refused' in refused && hasErrorCode(refused.refused, 'event_loop_lagging'));
    assert.equal(gate.inProgress, 0);
    delayMs = 100;
    assert.ok('release' in gate.admit(true), 'at the bound is not past it');
    assert.deepEqual(refusals, ['event_loop_lagging']);
  });

  it('while the loop lags, a request that is not new load (on a connection already served) is admitted, within the bound', () => {
    const { gate } = admission({ max: 1, maxDelayMs: 100, delayMs: () => 150 });
    assert.ok('refused' in gate.admit(true), 'new load is refused');
    assert.ok('release' in gate.admit(false), 'a client already served is not');
    const past = gate.admit(false);
    assert.ok(
      'refused' in past && hasErrorCode(past.refused, 'requests_at_limit'),
      'the bound holds for it all the same',
    );
  });

  it('while the loop lags, new load is refused only once eventLoopCheckFrom requests are in progress', () => {
    const { gate } = admission({ max: 10, maxDelayMs: 100, delayMs: () => 150, checkFrom: 2 });
    const first = gate.admit(true);
    const second = gate.admit(true);
    assert.ok('release' in first && 'release' in second, 'fewer than 2 in progress: the lag is not a flood');
    const third = gate.admit(true);
    assert.ok('refused' in third && hasErrorCode(third.refused, 'event_loop_lagging'), 'from 2 on, refused');
    first.release();
    assert.ok('release' in gate.admit(true), 'below it again, admitted');
  });

  it('maxEventLoopDelayMs 0 never refuses for the delay, and does not read it', () => {
    const { gate } = admission({
      maxDelayMs: 0,
      delayMs: () => assert.fail('the delay was read'),
    });
    assert.ok('release' in gate.admit(true));
  });

  it('the event-loop delay rises when the loop is kept busy (a busy loop in this process)', async () => {
    const delay = new EventLoopDelay(50);
    try {
      assert.equal(delay.ms, 0, 'nothing measured before the first window');
      // Each check keeps the loop busy, so the window after it holds a long sample.
      await poll('a delay past 100 ms', () => {
        const until = performance.now() + 300;
        while (performance.now() < until);
        return delay.ms > 100;
      });
    } finally {
      delay.stop();
    }
  });
});
