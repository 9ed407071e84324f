/**
 * Issue 39, when the scheduler looks for due runs: at the nearest due time in the store, never
 * later than `pollMs` after its last look, at once for a nearer schedule made here (`rearm`), and
 * after `pollMs` (not at once, in a loop) for a due time it could not claim. Fake timers and a fake
 * clock; the store is a fake that counts the looks.
 */
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Scheduler } from '../../src/runtime/schedules/scheduler.js';
import type { ScheduleRecords, StoredSchedule } from '../../src/schedule-ports.js';

const POLL_MS = 60_000;

function setUp(t: TestContext, nearest: number | undefined) {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const state = {
    now: 1_000_000,
    nearest,
    looks: 0,
    due: [] as StoredSchedule[],
    dueOnce: false,
    errors: [] as string[],
  };
  const records = {
    orphaned: async () => [],
    due: async () => {
      state.looks++;
      const page = state.due;
      if (state.dueOnce) state.due = [];
      return page;
    },
    nextDueAt: async () => state.nearest,
    // Another instance claims first: the claim is refused, the schedule stays due here.
    advance: async () => false,
  } as unknown as ScheduleRecords;
  const scheduler = new Scheduler({
    records,
    runs: {
      start: () => {
        throw new Error('no run starts in these tests');
      },
    },
    instanceId: 'here',
    shared: false,
    catchUpMs: 600_000,
    pollMs: POLL_MS,
    now: () => state.now,
    stateOf: async () => undefined,
    onError: (_error, what) => void state.errors.push(what),
    onInfo: () => undefined,
  });
  t.after(() => scheduler.stop());
  const settle = async () => {
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  const advance = async (ms: number) => {
    state.now += ms;
    t.mock.timers.tick(ms);
    await settle();
  };
  return { state, scheduler, settle, advance };
}

describe('issue 39: the scheduler wakes at the next due time', () => {
  it('issue 39: it looks at the nearest due time, not before', async (t) => {
    const { state, scheduler, settle, advance } = setUp(t, 1_000_000 + 5000);
    scheduler.start();
    await settle();
    const first = state.looks;
    assert.equal(first, 1);
    await advance(4999);
    assert.equal(state.looks, first, 'nothing looked before the due time');
    await advance(1);
    assert.equal(state.looks, first + 1, 'looked at the due time');
  });

  it('issue 39: with nothing due sooner, it looks again after pollMs; a nearer schedule made here sets it at once', async (t) => {
    const { state, scheduler, settle, advance } = setUp(t, undefined);
    scheduler.start();
    await settle();
    await advance(POLL_MS - 1);
    assert.equal(state.looks, 1);
    await advance(1);
    assert.equal(state.looks, 2, 'the fallback look, pollMs after the last');
    // A schedule made here, due in 2 s: the timer is set again for it.
    state.nearest = state.now + 2000;
    scheduler.rearm();
    await settle();
    await advance(1999);
    assert.equal(state.looks, 2);
    await advance(1);
    assert.equal(state.looks, 3);
  });

  it('issue 39: a due time it could not claim is tried again after pollMs, not in a loop', async (t) => {
    const { state, scheduler, settle, advance } = setUp(t, 1_000_000);
    state.due = [dueSchedule('s1')];
    scheduler.start();
    await settle();
    assert.equal(state.looks, 1);
    await advance(POLL_MS - 1);
    assert.equal(state.looks, 1, 'no look meanwhile');
    await advance(1);
    assert.equal(state.looks, 2);
    assert.deepEqual(state.errors, []);
  });

  it('issue 39: more schedules due than one look reads: it looks again at once', async (t) => {
    const { state, scheduler, settle } = setUp(t, undefined);
    state.due = Array.from({ length: 100 }, (_, i) => dueSchedule(`s${i}`));
    state.dueOnce = true;
    scheduler.start();
    await settle();
    assert.equal(state.looks, 2, 'the full page, then the rest (none here)');
  });
});

function dueSchedule(id: string): StoredSchedule {
  return {
    id,
    kind: 'every',
    spec: String(3_600_000),
    timeZone: 'UTC',
    createdMs: 1_000_000 - 3_600_000,
    nextDueMs: 1_000_000,
  } as StoredSchedule;
}
