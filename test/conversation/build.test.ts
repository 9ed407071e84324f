import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { buildConversation, SUMMARY_HEADING } from '../../src/conversation/build.js';
import { COMPACTION_KEY, NOTICE_KEY, REWIND_KEY } from '../../src/wire.js';

const modelHistory = (history: Message[], budgetChars?: number) => buildConversation({ history, budgetChars }).messages;

let n = 0;
function message(role: Role, parts: Part[], metadata: Record<string, unknown> = {}): Message {
  return {
    messageId: `m${++n}`,
    taskId: 't',
    contextId: 'c',
    role,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}
const text = (value: string): Part => ({
  content: { $case: 'text', value },
  mediaType: 'text/plain',
  filename: '',
  metadata: {},
});

describe('the history a turn sends to its model', () => {
  it('CMD-7: leaves out command messages and their replies, and the harness notices', () => {
    const history = [
      message(Role.ROLE_USER, [text('Hello')]),
      message(Role.ROLE_AGENT, [text('Hi!')]),
      message(Role.ROLE_USER, [text('/model builtin:echo')], { command: 'model' }),
      message(Role.ROLE_AGENT, [text('This task now uses builtin:echo')], { command: 'model' }),
      message(Role.ROLE_AGENT, [text('The turn was interrupted')], { [NOTICE_KEY]: 'interrupted' }),
      message(Role.ROLE_AGENT, [text('Sub-task x completed.')], { 'tiny-harness/subtask-note': { id: 'x' } }),
      message(Role.ROLE_USER, [text('And now?')]),
    ];
    assert.deepEqual(modelHistory(history), [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi!' },
      { role: 'assistant', content: 'Sub-task x completed.' },
      { role: 'user', content: 'And now?' },
    ]);
  });

  it('joins a message’s parts, shows data as JSON and files by name, and skips empty messages', () => {
    const data: Part = {
      content: { $case: 'data', value: { a: 1 } },
      mediaType: 'application/json',
      filename: '',
      metadata: {},
    };
    const file: Part = {
      content: { $case: 'url', value: 'https://example.test/f.pdf' },
      mediaType: 'application/pdf',
      filename: 'f.pdf',
      metadata: {},
    };
    assert.deepEqual(modelHistory([message(Role.ROLE_USER, [text('look'), data, file]), message(Role.ROLE_USER, [])]), [
      { role: 'user', content: 'look\n{"a":1}\n[file f.pdf]' },
    ]);
  });

  it('sends only the newest messages that fit the budget, starting at a user message', () => {
    const history = [
      message(Role.ROLE_USER, [text('u1 ' + 'a'.repeat(40))]),
      message(Role.ROLE_AGENT, [text('a1 ' + 'b'.repeat(40))]),
      message(Role.ROLE_USER, [text('u2 ' + 'c'.repeat(40))]),
      message(Role.ROLE_AGENT, [text('a2 ' + 'd'.repeat(40))]),
      message(Role.ROLE_USER, [text('/status')], { command: 'status' }),
      message(Role.ROLE_AGENT, [text('State: ' + 'e'.repeat(500))], { command: 'status' }),
      message(Role.ROLE_USER, [text('u3')]),
    ];
    const roles = (budget: number) =>
      modelHistory(history, budget).map((m) => (m.role === 'tool' ? m.call.id : m.content.slice(0, 2)));
    assert.deepEqual(roles(Infinity), ['u1', 'a1', 'u2', 'a2', 'u3'], 'no budget: everything, commands left out');
    assert.deepEqual(
      roles(1000),
      ['u1', 'a1', 'u2', 'a2', 'u3'],
      'the command reply does not count against the budget',
    );
    assert.deepEqual(roles(135), ['u2', 'a2', 'u3'], 'cut after a2 and u2 would leave a1 first: a1 is dropped too');
    assert.deepEqual(roles(50), ['u3'], 'a2 alone does not fit with u3; a conversation cut short starts with the user');
    assert.deepEqual(roles(1), ['u3'], 'the newest message always goes, whatever its size');
  });

  it('CMD-36: sends the system prompt, the instructions in order, the summary, the pinned last request, then what follows the point', () => {
    const u1 = message(Role.ROLE_USER, [text('u1')]);
    const a1 = message(Role.ROLE_AGENT, [text('a1')]);
    const u2 = message(Role.ROLE_USER, [text('u2 keep the API decisions')]);
    const a2 = message(Role.ROLE_AGENT, [text('a2')]);
    const compactCommand = message(Role.ROLE_USER, [text('/compact')], { command: 'compact' });
    const point = message(Role.ROLE_AGENT, [text('the summary')], {
      [COMPACTION_KEY]: { upTo: a2.messageId, model: 'm', charsBefore: 10, charsAfter: 5 },
    });
    const reply = message(Role.ROLE_AGENT, [text('Compacted.')], { command: 'compact' });
    const u3 = message(Role.ROLE_USER, [text('u3')]);
    const built = buildConversation({
      systemPrompt: 'Be brief.',
      instructions: [
        { path: 'AGENTS.md', text: 'first file' },
        { path: 'docs/more.md', text: 'second file' },
      ],
      history: [u1, a1, u2, a2, compactCommand, point, reply, u3],
    });
    assert.equal(
      built.system,
      'Be brief.\n\nInstructions from AGENTS.md:\n\nfirst file\n\nInstructions from docs/more.md:\n\nsecond file',
    );
    assert.deepEqual(built.messages, [
      { role: 'user', content: `${SUMMARY_HEADING}\n\nthe summary` },
      { role: 'user', content: 'u2 keep the API decisions' },
      { role: 'user', content: 'u3' },
    ]);
    assert.equal(built.compaction?.upTo, a2.messageId);
    assert.deepEqual(built.sizes, {
      systemPrompt: 9,
      instructions: built.system!.length - 'Be brief.'.length - 4, // less the blank lines between the three parts
      summary: SUMMARY_HEADING.length + 2 + 'the summary'.length,
      history: 'u2 keep the API decisions'.length + 2,
    });
  });

  it('CMD-36: a point whose summary covers less keeps the messages after what it covers verbatim', () => {
    const u1 = message(Role.ROLE_USER, [text('u1')]);
    const a1 = message(Role.ROLE_AGENT, [text('a1')]);
    const u2 = message(Role.ROLE_USER, [text('u2')]);
    const point = message(Role.ROLE_AGENT, [text('sum')], {
      [COMPACTION_KEY]: { upTo: a1.messageId, model: 'm', charsBefore: 6, charsAfter: 3 },
      [NOTICE_KEY]: 'compacted',
    });
    const a2 = message(Role.ROLE_AGENT, [text('a2')]);
    const sent = modelHistory([u1, a1, u2, point, a2]).map((m) => (m.role === 'tool' ? '' : m.content));
    assert.deepEqual(sent, [`${SUMMARY_HEADING}\n\nsum`, 'u1', 'u2', 'a2']);
  });

  it('CMD-36: past the budget, the oldest verbatim messages are cut and counted, never the summary or the pinned request', () => {
    const u1 = message(Role.ROLE_USER, [text('u1 ' + 'a'.repeat(100))]);
    const a1 = message(Role.ROLE_AGENT, [text('a1')]);
    const point = message(Role.ROLE_AGENT, [text('sum')], {
      [COMPACTION_KEY]: { upTo: a1.messageId, model: 'm', charsBefore: 1, charsAfter: 1 },
    });
    const after = [1, 2, 3].flatMap((i) => [
      message(Role.ROLE_USER, [text(`u${i + 1} ` + 'b'.repeat(100))]),
      message(Role.ROLE_AGENT, [text(`r${i + 1} ` + 'c'.repeat(100))]),
    ]);
    const built = buildConversation({ history: [u1, a1, point, ...after], budgetChars: 500 });
    const starts = built.messages.map((m) => (m.role === 'tool' ? '' : m.content.slice(0, 3)));
    assert.deepEqual(starts, ['Sum', 'u1 ', 'u4 ', 'r4 ']);
    assert.equal(built.cut, 4, 'u2, r2, u3 and r3 were left out, and said');
    assert.equal(buildConversation({ history: [u1, a1, point, ...after] }).cut, 0);
  });

  it('CMD-37: leaves out what a rewind hid, and the mark itself, but not what was said after it', () => {
    const u1 = message(Role.ROLE_USER, [text('u1')]);
    const a1 = message(Role.ROLE_AGENT, [text('a1')]);
    const u2 = message(Role.ROLE_USER, [text('u2')]);
    const a2 = message(Role.ROLE_AGENT, [text('a2')]);
    const mark = message(Role.ROLE_AGENT, [text('Rewound')], {
      [REWIND_KEY]: { to: u2.messageId, hidden: [u2.messageId, a2.messageId] },
    });
    // A client may reuse an id: the message said after the mark stays.
    const again = { ...message(Role.ROLE_USER, [text('u2 again')]), messageId: u2.messageId };
    const sent = modelHistory([u1, a1, u2, a2, mark, again]).map((m) => (m.role === 'tool' ? '' : m.content));
    assert.deepEqual(sent, ['u1', 'a1', 'u2 again']);
  });
});
