/** Titles of recent conversations: the first message the user sent, on one line and cut to a sensible length; the same titles told apart. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { distinction, TITLE_CHARS, titleOf, type RecentTask } from '../../src/recent-tasks.js';

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

describe('conversations with the same title', () => {
  const task = (id: string, title: string, reply: string): RecentTask => ({
    id,
    state: undefined,
    updated: undefined,
    title,
    reply,
  });

  it('issue 33: are told apart by their first replies, and by their task ids where those do not', () => {
    const tasks = [
      task('aaaaaaaa-1', 'hello', 'Hi!'),
      task('bbbbbbbb-2', 'hello', 'Hello.'),
      task('cccccccc-3', 'hello', 'Hello.'),
      task('dddddddd-4', 'hello', ''),
      task('eeeeeeee-5', 'a title of its own', 'Sure.'),
    ];
    assert.deepEqual(
      tasks.map((t) => distinction(t, tasks)),
      ['Hi!', 'Hello. · task bbbbbbbb', 'Hello. · task cccccccc', 'task dddddddd', ''],
    );
  });
});
