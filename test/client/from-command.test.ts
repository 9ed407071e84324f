/** CMD-38: a prompt a command file or skill put in the turn is shown as the command's, in the terminal chat and on the page. */
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ChatScreen } from '../../src/client/chat-screen.js';
import { styleFor } from '../../src/client/render.js';
import { FROM_COMMAND_KEY, textPart } from '../../src/wire.js';
import { readHistoryMessage } from '../../web/src/events.js';
import { fakeChat, FakeTerminal } from './fake-terminal.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';

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

describe('tiny-harness chat: a command file run inline (CMD-38)', () => {
  let h: TestHarness;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tiny-harness-chat-inline-'));
    writeFileSync(join(dir, 'review.md'), '---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully.\n');
    h = await startTestHarness({
      script: { reply: (body) => `re: ${lastMessage(body).content}` },
      harness: { commandsDir: dir },
    });
  });

  after(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("CMD-38: the reply says it started, then the turn's answer follows in the same conversation", async () => {
    const chat = await fakeChat(h.harness.url);
    try {
      chat.terminal.press('/review a.ts\r');
      await chat.terminal.waitFor("the inline turn's answer", (s) => s.includes('re: Review a.ts carefully.'));
      const text = chat.terminal.text;
      assert.ok(
        text.indexOf('/review started') < text.indexOf('re: Review a.ts carefully.'),
        'the reply comes before the answer',
      );
    } finally {
      await chat.close();
    }
  });
});
