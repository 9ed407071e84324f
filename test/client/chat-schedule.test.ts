/**
 * Issue 39: `/schedule` in `tiny-harness chat`, in a tmux pane against the real harness: offered
 * as `/sch` is typed, its reply names the next runs, and a run (the scheduler ticked with a fake
 * clock) is a task of the conversation's context, listed by `/schedule` with its task.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { TMUX, Tmux, atPrompt, type ChatPane } from './support.js';

const START = Date.parse('2026-12-07T07:30:00Z');
let clock = START;

describe('tiny-harness chat with /schedule (issue 39)', needs(TMUX), () => {
  let h: TestHarness;
  const tmux = new Tmux();
  let pane: ChatPane | undefined;

  before(async () => {
    h = await startTestHarness({
      script: { reply: 'the feed has news' },
      config: { schedules: { pollMs: 60_000, timeZone: 'UTC' } },
      harness: { now: () => clock },
    });
  });

  after(async () => {
    await pane?.kill();
    await tmux.close();
    await h?.close();
  });

  it('issue 39: /schedule is offered, names the next three runs, and lists the run it made', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('/sch');
    await pane.waitFor((s) => /\/schedule .*— Run a prompt on a schedule/.test(s));
    await pane.type('edule every 1h check the feed');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('Next runs:') && atPrompt(s));
    // The chat wraps long replies at words: read as one line.
    assert.match(
      (await pane.screen()).replace(/\s+/g, ' '),
      /2026-12-07 08:30, 2026-12-07 09:30, 2026-12-07 10:30 \(UTC\)/,
    );
    clock = START + 3_600_000 + 5;
    await h.harness.scheduler!.tick();
    await h.harness.scheduler!.settled();
    await pane.type('/schedule');
    await pane.keys('Enter');
    await pane.waitFor(
      (s) => /Last run: 2026-12-07 08:30, task [0-9a-f-]{36}/.test(s.replace(/\s+/g, ' ')) && atPrompt(s),
    );
  });
});
