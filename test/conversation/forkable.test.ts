import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message } from '@a2a-js/sdk';
import { buildConversation } from '../../src/conversation/build.js';
import { conversationCopy, forkable } from '../../src/conversation/forkable.js';
import { COMMAND_KEY, COMPACTION_KEY, NOTICE_KEY, REWIND_KEY, type CompactionPoint } from '../../src/wire.js';

let n = 0;
function message(role: Role, value: string, metadata: Record<string, unknown> = {}, messageId = `m${++n}`): Message {
  return {
    messageId,
    taskId: 't',
    contextId: 'c',
    role,
    parts: [{ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: {} }],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}
const user = (value: string, metadata?: Record<string, unknown>) => message(Role.ROLE_USER, value, metadata);
const agent = (value: string, metadata?: Record<string, unknown>) => message(Role.ROLE_AGENT, value, metadata);
const command = (name: string) => [
  user(`/${name}`, { [COMMAND_KEY]: name }),
  agent(`${name} done`, { [COMMAND_KEY]: name }),
];
const texts = (messages: Message[]) =>
  messages.map((m) => (m.parts[0]?.content?.$case === 'text' ? m.parts[0].content.value : ''));
const sent = (history: Message[]) => {
  const built = buildConversation({ systemPrompt: 'be brief', history });
  return { system: built.system, messages: built.messages, sizes: built.sizes };
};

describe('what /fork copies (CMD-37)', () => {
  const one = user('one');
  const two = user('two');
  const three = user('three');
  const history = [one, agent('re one'), ...command('status'), two, agent('re two'), three, agent('re three')];

  it('CMD-37: without n, the whole visible conversation; with n, what comes before the n-th newest user message, commands not counted', () => {
    assert.deepEqual(texts(forkable(history)!.messages), texts(history));
    assert.equal(forkable(history)!.at, undefined);
    const atTwo = forkable(history, 2)!;
    assert.deepEqual(texts(atTwo.messages), ['one', 're one', '/status', 'status done']);
    assert.equal(atTwo.at, two);
    assert.deepEqual(texts(forkable(history, 1)!.messages), texts(history.slice(0, -2)));
    assert.deepEqual(forkable(history, 3)!.messages, []);
    assert.equal(forkable(history, 4), undefined, 'no fourth point');
  });

  it('CMD-37: points skip the harness’s notices and rewound messages', () => {
    const resumed = user('(resumed)', { [NOTICE_KEY]: 'resumed' });
    const hidden = user('taken back');
    const mark = agent('rewound', { [REWIND_KEY]: { to: hidden.messageId, hidden: [hidden.messageId] } });
    const rewound = [...history, hidden, agent('re taken back'), mark, resumed];
    assert.equal(forkable(rewound, 1)!.at, three);
  });

  it('CMD-37: the copy leaves out commands, notices and rewind marks, and its next turn sends the same as the source’s', () => {
    const hidden = user('taken back');
    const hiddenReply = agent('re taken back');
    const source = [
      ...history,
      agent('The turn was interrupted', { [NOTICE_KEY]: 'interrupted' }),
      hidden,
      hiddenReply,
      ...command('rewind'),
      agent('rewound', { [REWIND_KEY]: { to: hidden.messageId, hidden: [hidden.messageId, hiddenReply.messageId] } }),
      user('four'),
    ];
    const copy = conversationCopy(source);
    assert.deepEqual(texts(copy), ['one', 're one', 'two', 're two', 'three', 're three', 'four']);
    assert.deepEqual(sent(copy), sent(source));
  });

  it('CMD-37: a compacted conversation is copied with its summary, the message it covers up to and the pinned request', () => {
    const pinned = user('the pinned request');
    const upTo = agent('the answer before the summary');
    const point: CompactionPoint = { upTo: upTo.messageId, model: 'm', charsBefore: 100, charsAfter: 10 };
    const cases: Array<[string, Message[]]> = [
      ['up to an answer', [user('early'), agent('re early'), pinned, upTo]],
      // What the summary covers may end at a message the model does not read: it is copied all the same.
      ['up to a notice', [user('early'), pinned, agent('re'), { ...upTo, metadata: { [NOTICE_KEY]: 'stopped' } }]],
    ];
    for (const [name, before] of cases) {
      const source = [
        ...before,
        ...command('compact'),
        agent('the summary', { [COMPACTION_KEY]: point }),
        user('after'),
        agent('re after'),
      ];
      const copy = conversationCopy(source);
      assert.ok(
        copy.some((m) => m.messageId === upTo.messageId),
        `${name}: the message the summary covers up to is copied`,
      );
      assert.ok(!texts(copy).includes('/compact'), `${name}: not the command`);
      const fromCopy = sent(copy);
      assert.deepEqual(fromCopy, sent(source), name);
      assert.ok(fromCopy.sizes.summary > 0, `${name}: the summary is sent`);
      assert.deepEqual(
        fromCopy.messages.slice(1).map((m) => (m.role === 'tool' ? '' : m.content)),
        ['the pinned request', 'after', 're after'],
        name,
      );
    }
  });
});
