import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { modelHistory, NOTICE_KEY } from '../../src/runtime/history.js';

let n = 0;
function message(role: Role, parts: Part[], metadata: Record<string, unknown> = {}): Message {
  return { messageId: `m${++n}`, taskId: 't', contextId: 'c', role, parts, metadata, extensions: [], referenceTaskIds: [] };
}
const text = (value: string): Part => ({ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: {} });

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
    const data: Part = { content: { $case: 'data', value: { a: 1 } }, mediaType: 'application/json', filename: '', metadata: {} };
    const file: Part = { content: { $case: 'url', value: 'https://example.test/f.pdf' }, mediaType: 'application/pdf', filename: 'f.pdf', metadata: {} };
    assert.deepEqual(modelHistory([message(Role.ROLE_USER, [text('look'), data, file]), message(Role.ROLE_USER, [])]), [
      { role: 'user', content: 'look\n{"a":1}\n[file f.pdf]' },
    ]);
  });
});
