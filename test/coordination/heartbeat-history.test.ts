/**
 * The rule that says when another instance is dead (`heartbeat-history.ts`): its heartbeat is
 * older than a lease counted in time this instance's own heartbeats show the database took
 * writes. A stall of the database, which holds back every heartbeat alike, kills nobody; an
 * instance that stopped is found dead after a bounded number of the survivor's heartbeats.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { deadBefore, HeartbeatHistory } from '../../src/coordination/heartbeat-history.js';
import { checkProperty } from '../support/property.js';

const LEASE = 9000;
const INTERVAL = LEASE / 3;

/** Heartbeats from `start`, one every `gap` ms. */
function beats(start: number, count: number, gap = INTERVAL + 10): number[] {
  return Array.from({ length: count }, (_, i) => start + i * gap);
}

describe('when another instance is dead, by this instance heartbeats', () => {
  it('needs a lease of its own heartbeats first: an instance that just started judges nobody', () => {
    assert.equal(deadBefore([], LEASE, INTERVAL), undefined);
    assert.equal(deadBefore([1000], LEASE, INTERVAL), undefined);
    assert.equal(deadBefore(beats(1000, 3), LEASE, INTERVAL), undefined, 'two intervals are not a lease');
    assert.equal(deadBefore([1000, 1000 + LEASE], LEASE, INTERVAL), undefined, 'one long gap counts one interval');
  });

  it('heartbeats one interval apart count as they pass: dead is silent for a lease', () => {
    const steady = beats(1000, 10, INTERVAL);
    assert.equal(deadBefore(steady, LEASE, INTERVAL), steady.at(-1)! - LEASE);
    // The default lease, 10 s, is no multiple of three ms: the moment is whole ms, as heartbeats are stored.
    const moment = deadBefore(beats(1000, 10, 3334), 10_000, 10_000 / 3);
    assert.ok(moment !== undefined && Number.isInteger(moment) && moment <= 1000 + 9 * 3334 - 10_000, String(moment));
  });

  it('a gap longer than the interval counts one interval, from its start: a stall counts for nothing beyond that', () => {
    const before = beats(1000, 5);
    const stallEnd = before.at(-1)! + 15_000;
    const after = [stallEnd, stallEnd + INTERVAL + 10];
    // Right after the stall and one beat later, only instances silent since before the last beats before the stall are dead.
    assert.ok(deadBefore([...before, stallEnd], LEASE, INTERVAL)! <= before.at(-3)!);
    assert.ok(deadBefore([...before, ...after], LEASE, INTERVAL)! <= before.at(-2)!);
    // Once a lease of writable time has passed after the stall, the stall is behind the moment.
    const later = [...before, ...after, ...beats(after.at(-1)! + INTERVAL, 3)];
    assert.ok(deadBefore(later, LEASE, INTERVAL)! >= stallEnd);
  });

  it('slow ticks still add up: heartbeats two intervals apart count one interval each, so the dead are still found', () => {
    const slow = beats(1000, 5, 2 * INTERVAL);
    assert.equal(deadBefore(slow, LEASE, INTERVAL), slow.at(-4));
  });

  it('the history keeps only what a lease needs and gives what the whole list gives; forget starts over', () => {
    checkProperty(
      'history matches the whole list',
      fc.property(fc.array(fc.integer({ min: 1, max: 4 * INTERVAL }), { maxLength: 60 }), (gaps) => {
        const history = new HeartbeatHistory(LEASE, INTERVAL);
        const all: number[] = [];
        let at = 1_000_000;
        for (const gap of gaps) {
          at += gap;
          all.push(at);
          history.written(at);
          assert.equal(history.deadBefore(), deadBefore(all, LEASE, INTERVAL));
        }
      }),
    );
    const history = new HeartbeatHistory(LEASE, INTERVAL);
    for (const at of beats(1000, 6)) history.written(at);
    assert.notEqual(history.deadBefore(), undefined);
    history.forget();
    history.written(100_000);
    assert.equal(history.deadBefore(), undefined, 'what came before its row was taken vouches for nothing');
  });

  /**
   * A simulation of two instances, A judging B, through stalls during which no heartbeat is
   * written: one held back is written when the stall ends, in either order. Each instance's next
   * heartbeat comes an interval after its last, plus up to half an interval (a slow tick).
   */
  function simulate(stalls: { at: number; length: number }[], slowTicks: number[], stopsAt = Infinity) {
    const endOfStall = (t: number) => {
      for (const stall of stalls) if (t >= stall.at && t < stall.at + stall.length) return stall.at + stall.length;
      return t;
    };
    const writes = (offset: number, until: number) => {
      const out: number[] = [];
      let t = offset;
      let i = 0;
      while (out.length === 0 || t < until) {
        out.push(endOfStall(t));
        t = out.at(-1)! + INTERVAL + slowTicks[i++ % slowTicks.length]!;
      }
      return out;
    };
    const lastStall = stalls.reduce((end, s) => Math.max(end, s.at + s.length), 0);
    const horizon = Math.max(lastStall, Number.isFinite(stopsAt) ? stopsAt : 0) + 4 * LEASE;
    const a = writes(0, horizon);
    const b = writes(slowTicks[0]!, Math.min(horizon, stopsAt));
    /** A's judgements: at each of its heartbeats, B's last heartbeat strictly before it (one written at the same moment is not seen yet). */
    return a.map((at, i) => {
      const moment = deadBefore(a.slice(0, i + 1), LEASE, INTERVAL);
      const seen = b.filter((t) => t < at).at(-1) ?? -Infinity;
      return { at, dead: moment !== undefined && seen < moment, lastOfB: b.at(-1)! };
    });
  }

  const stallsArbitrary = fc.array(
    fc.record({ at: fc.integer({ min: 0, max: 20 * LEASE }), length: fc.integer({ min: 1, max: 3 * LEASE }) }),
    { maxLength: 4 },
  );
  const slowTicksArbitrary = fc.array(fc.integer({ min: 0, max: INTERVAL / 2 }), { minLength: 1, maxLength: 8 });

  it('stalls of any length, at any moment, never make a live instance dead', () => {
    checkProperty(
      'no live instance is dead',
      fc.property(stallsArbitrary, slowTicksArbitrary, (stalls, slowTicks) => {
        const judged = simulate(stalls, slowTicks);
        assert.deepEqual(
          judged.filter((j) => j.dead),
          [],
        );
      }),
    );
  });

  it('an instance that stopped is dead within five of the survivor heartbeats after the last stall', () => {
    checkProperty(
      'the stopped are found',
      fc.property(
        stallsArbitrary,
        slowTicksArbitrary,
        fc.integer({ min: 0, max: 20 * LEASE }),
        (stalls, slowTicks, stopsAt) => {
          const lastStall = stalls.reduce((end, s) => Math.max(end, s.at + s.length), 0);
          const judged = simulate(stalls, slowTicks, stopsAt);
          const after = judged.filter((j) => j.at > Math.max(lastStall, judged[0]!.lastOfB));
          assert.ok(
            after.slice(0, 5).some((j) => j.dead),
            `not dead by ${after
              .slice(0, 5)
              .map((j) => j.at)
              .join(', ')}`,
          );
        },
      ),
    );
  });
});
