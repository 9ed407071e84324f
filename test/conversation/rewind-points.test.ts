import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message } from '@a2a-js/sdk';
import {
  hiddenFrom,
  previewOf,
  rewindMarkMessage,
  rewindPoints,
  PREVIEW_CHARS,
} from '../../src/conversation/rewind-points.js';
import { visibleHistory } from '../../src/conversation/visible.js';
import { COMMAND_KEY, rewindOf, textOf, textPart } from '../../src/wire.js';

let n = 0;
function message(role: Role, text: string, metadata: Record<string, unknown> = {}): Message {
  return {
    messageId: `m${++n}`,
    taskId: 't',
    contextId: 'c',
    role,
    parts: [textPart(text)],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}
const user = (text: string) => message(Role.ROLE_USER, text);
const agent = (text: string) => message(Role.ROLE_AGENT, text);
const command = (text: string, role = Role.ROLE_USER) => message(role, text, { [COMMAND_KEY]: 'status' });

describe('rewind points (CMD-37)', () => {
  const history = [
    user('first\nsecond line'),
    agent('re: first'),
    command('/status'),
    command('Status: ...', Role.ROLE_AGENT),
    user('second'),
    agent('re: second'),
    user('third'),
    agent('re: third'),
  ];

  it('CMD-37: point n is the n-th newest user message that is not a command message; the preview is its first line', () => {
    const points = rewindPoints(history);
    assert.deepEqual(
      points.map(({ n, preview, text }) => ({ n, preview, text })),
      [
        { n: 1, preview: 'third', text: 'third' },
        { n: 2, preview: 'second', text: 'second' },
        { n: 3, preview: 'first', text: 'first\nsecond line' },
      ],
    );
    assert.equal(points[1]!.messageId, history[4]!.messageId);
  });

  it('CMD-37: hiddenFrom(n) is the point and every visible message after it, command exchanges included; none without point n', () => {
    assert.deepEqual(
      hiddenFrom(history, 3)!.hidden,
      history.map((m) => m.messageId),
    );
    assert.deepEqual(
      hiddenFrom(history, 2)!.hidden,
      history.slice(4).map((m) => m.messageId),
    );
    assert.equal(hiddenFrom(history, 4), undefined);
    assert.equal(hiddenFrom(history, 0), undefined);
    assert.equal(hiddenFrom([], 1), undefined);
  });

  it('CMD-37: a mark hides what it names; points and later rewinds count only the visible messages', () => {
    const { point, hidden } = hiddenFrom(history, 2)!;
    const mark = rewindMarkMessage({ messageId: 'mark1', taskId: 't', contextId: 'c' }, point, hidden);
    assert.deepEqual(rewindOf(mark), { to: history[4]!.messageId, hidden });
    assert.equal(textOf(mark.parts), 'Rewound to before "second"');
    const after = [...history, mark, user('fourth')];
    assert.deepEqual(
      visibleHistory(after).map((m) => textOf(m.parts)),
      ['first\nsecond line', 're: first', '/status', 'Status: ...', 'Rewound to before "second"', 'fourth'],
    );
    assert.deepEqual(
      rewindPoints(after).map((p) => p.text),
      ['fourth', 'first\nsecond line'],
    );
    // Point 2 is now "first": the earlier mark is among what it hides, and what it hid stays hidden.
    const again = hiddenFrom(after, 2)!;
    assert.deepEqual(
      again.hidden,
      visibleHistory(after).map((m) => m.messageId),
    );
  });

  it('a preview is the first line, cut to 80 characters', () => {
    assert.equal(previewOf('  hello \nworld'), 'hello');
    const long = previewOf('x'.repeat(200));
    assert.equal(long.length, PREVIEW_CHARS);
    assert.ok(long.endsWith('…'));
  });
});
