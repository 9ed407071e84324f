/** Titles of recent conversations: the first message the user sent, on one line and cut to a sensible length. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TITLE_CHARS, titleOf } from '../../src/recent-tasks.js';

describe('a recent conversation’s title', () => {
  it('is the message on one line, as it is when short', () => {
    assert.equal(titleOf('  Fix the\n  flaky   test\n'), 'Fix the flaky test');
  });

  it('is cut at a word when long, with an ellipsis, never longer than the bound', () => {
    const text = 'Please read the README and then tell me how the event log numbers its generations across instances';
    const title = titleOf(text);
    assert.ok(title.length <= TITLE_CHARS, `${title.length} characters`);
    assert.ok(title.endsWith('…'));
    assert.ok(text.startsWith(title.slice(0, -1)), 'a prefix of the message');
    assert.ok(text[title.length - 1] === ' ', 'cut where a word ends');
  });

  it('cuts one long word where it must', () => {
    assert.equal(titleOf('x'.repeat(100), 10), `${'x'.repeat(9)}…`);
  });
});
