/** CMD-38: a prompt a command file or skill put in the turn is shown as the command's, in the terminal chat and on the page. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ChatScreen } from '../../src/client/chat-screen.js';
import { styleFor } from '../../src/client/render.js';
import { FROM_COMMAND_KEY, textPart } from '../../src/wire.js';
import { readHistoryMessage } from '../../web/src/events.js';
import { FakeTerminal } from './fake-terminal.js';

const message = (id: string, text: string, metadata: Record<string, unknown> = {}): Message => ({
  messageId: id,
  taskId: 't',
  contextId: 'c',
  role: Role.ROLE_USER,
  parts: [textPart(text)],
  metadata,
  extensions: [],
  referenceTaskIds: [],
});

const typed = message('m1', 'what I typed');
const prompt = message('m2', 'Review a.ts please.', { [FROM_COMMAND_KEY]: { command: '/review' } });

describe("a command's prompt in a client (CMD-38)", () => {
  it("CMD-38: the terminal chat labels it with the command; the user's own words stay as typed", () => {
    const terminal = new FakeTerminal();
    const screen = new ChatScreen(terminal.output, styleFor({ isTTY: false }));
    const task: Task = {
      id: 't',
      contextId: 'c',
      status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: undefined },
      artifacts: [],
      metadata: {},
      history: [typed, prompt],
    };
    screen.history(task);
    assert.deepEqual(terminal.text.split('\n').slice(0, 2), ['❯ what I typed', '❯ [from /review] Review a.ts please.']);
  });

  it('CMD-38: the page reads it as a user bubble marked with the command', () => {
    assert.deepEqual(readHistoryMessage(typed), [{ kind: 'user', messageId: 'm1', text: 'what I typed' }]);
    assert.deepEqual(readHistoryMessage(prompt), [
      { kind: 'user', messageId: 'm2', text: 'Review a.ts please.', fromCommand: '/review' },
    ]);
  });
});
