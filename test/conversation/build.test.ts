import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { buildConversation } from '../../src/conversation/build.js';
import { NOTICE_KEY } from '../../src/wire.js';

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
});
