/** Issue 39: how a schedule's `<when>` reads and when it comes due (croner for cron and instants). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dueThrough, nextDues, readWhen } from '../../src/runtime/schedules/schedule-times.js';

const NOW = Date.parse('2026-12-07T07:30:00Z');
const iso = (ms: number[]) => ms.map((m) => new Date(m).toISOString());

describe('issue 39: schedule times', () => {
  it('issue 39: a cron expression follows its time zone across a daylight-saving change', () => {
    const read = readWhen('0 8 * * *', 'Europe/Paris', Date.parse('2026-03-27T12:00:00Z'));
    assert.deepEqual(read, { kind: 'cron', spec: '0 8 * * *' });
    const times = { kind: 'cron' as const, spec: '0 8 * * *', timeZone: 'Europe/Paris', createdMs: 0 };
    // 08:00 in Paris is 07:00 UTC before 29 March 2026 and 06:00 UTC after.
    assert.deepEqual(iso(nextDues(times, Date.parse('2026-03-27T12:00:00Z'), 3)), [
      '2026-03-28T07:00:00.000Z',
      '2026-03-29T06:00:00.000Z',
      '2026-03-30T06:00:00.000Z',
    ]);
  });

  it('issue 39: every <n> steps from its creation; what came due while down is counted, the latest kept', () => {
    assert.deepEqual(readWhen('every 90m', 'UTC', NOW), { kind: 'every', spec: String(90 * 60_000) });
    const times = { kind: 'every' as const, spec: String(3_600_000), timeZone: 'UTC', createdMs: NOW };
    assert.deepEqual(dueThrough(times, NOW + 3_600_000, NOW + 3.5 * 3_600_000), {
      latest: NOW + 3 * 3_600_000,
      count: 3,
      next: NOW + 4 * 3_600_000,
    });
    const cron = { kind: 'cron' as const, spec: '0 * * * *', timeZone: 'UTC', createdMs: NOW };
    assert.deepEqual(dueThrough(cron, Date.parse('2026-12-07T08:00:00Z'), Date.parse('2026-12-07T10:30:00Z')), {
      latest: Date.parse('2026-12-07T10:00:00Z'),
      count: 3,
      next: Date.parse('2026-12-07T11:00:00Z'),
    });
  });

  it('issue 39: at <time> is read in the zone given, or its own offset; once', () => {
    const paris = { kind: 'at' as const, spec: '2026-12-24T17:00', timeZone: 'Europe/Paris', createdMs: NOW };
    assert.deepEqual(iso(nextDues(paris, NOW, 3)), ['2026-12-24T16:00:00.000Z']);
    const offset = { ...paris, spec: '2026-12-24T17:00+02:00' };
    assert.deepEqual(iso(nextDues(offset, NOW, 3)), ['2026-12-24T15:00:00.000Z']);
  });

  it('issue 39: refused: below one minute, not a cron expression, an unknown zone, a time passed', () => {
    for (const [when, zone] of [
      ['every 59s', 'UTC'],
      ['every 0m', 'UTC'],
      ['*/20 * * * * *', 'UTC'],
      ['0 8 * *', 'UTC'],
      ['0 8 * * *', 'Mars/Olympus'],
      ['at 2026-12-01T00:00', 'UTC'],
      ['at tomorrow', 'UTC'],
    ] as const)
      assert.ok('problem' in readWhen(when, zone, NOW), when);
  });
});
