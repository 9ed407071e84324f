/** Issue 39: `/schedule` and `/unschedule` through `tiny-harness send`, as a script would use them. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { runCli, taskLine } from './support.js';

let h: TestHarness;

before(async () => {
  h = await startTestHarness({
    script: { reply: 'done' },
    config: { schedules: { pollMs: 60_000, timeZone: 'UTC' } },
    harness: { now: () => Date.parse('2026-12-07T07:30:00Z') },
  });
});

after(async () => {
  await h?.close();
});

describe('tiny-harness send with /schedule (issue 39)', () => {
  it('issue 39: send "/schedule <when> <prompt>" names the next three runs; /schedule lists it; /unschedule removes it', async () => {
    const made = await runCli(['send', h.harness.url, '/schedule', '"0 8 * * 1-5"', 'summarise', 'the', 'issues']);
    assert.equal(made.code, 0, made.stderr);
    const id = /Scheduled (s[0-9a-f]{10}) \(0 8 \* \* 1-5\)/.exec(made.stdout)?.[1];
    assert.ok(id, made.stdout);
    assert.match(made.stdout, /Next runs: 2026-12-07 08:00, 2026-12-08 08:00, 2026-12-09 08:00 \(UTC\)/);
    const { taskId } = taskLine(made.stderr);
    const listed = await runCli(['send', '--task', taskId, h.harness.url, '/schedule']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^- ${id} \\(0 8 \\* \\* 1-5\\): "summarise the issues"`, 'm'));
    const removed = await runCli(['send', '--task', taskId, h.harness.url, '/unschedule', id]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, new RegExp(`Removed schedule ${id}`));
    const empty = await runCli(['send', '--task', taskId, h.harness.url, '/schedule']);
    assert.match(empty.stdout, /You have no schedules/);
  });

  it('issue 39: a when that does not read is answered in the conversation, naming the forms', async () => {
    const result = await runCli(['send', h.harness.url, '/schedule', 'every', '30s', 'too', 'often']);
    assert.match(result.stdout + result.stderr, /is not an interval: write it as every 30m, every 2h or every 1d/);
  });
});
