/**
 * The terminal chat and the conversation extension's commands: Esc Esc lists the points
 * `/rewind` can go back to, newest first; choosing one rewinds there and puts that message back
 * in the prompt; after `/fork` the chat offers to go on in the new task; `/context` is a bar.
 * The chat runs in this process on a pretend terminal, against the harness and its commands.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { ChatScreen } from '../../src/client/chat-screen.js';
import { styleFor } from '../../src/client/render.js';
import { COMPACTION_KEY, REWIND_KEY, textPart } from '../../src/wire.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';
import { poll } from '../support/wait.js';
import { fakeChat, FakeTerminal, type FakeChat } from './fake-terminal.js';

let h: TestHarness;
let chat: FakeChat | undefined;

const ESC_ESC = '\x1b\x1b';
const DOWN = '\x1b[B';

/** What the prompt shows last: the typed text after the prompt, once the screen settled. */
const lastPrompt = (text: string) =>
  text
    .trimEnd()
    .split(/[\r\n]+/)
    .at(-1)!
    .trim();

/** Sends `text` and waits for its reply. */
async function say(c: FakeChat, text: string): Promise<void> {
  c.terminal.press(`${text}\r`);
  await c.terminal.waitFor(`the reply to ${text}`, (s) => s.includes(`re: ${text}`));
}

describe('tiny-harness chat: rewind, fork and context (CMD-37)', () => {
  before(async () => {
    h = await startTestHarness({ script: { reply: (body) => `re: ${lastMessage(body).content}` } });
  });

  afterEach(async () => {
    await chat?.close();
    chat = undefined;
  });

  after(async () => {
    await h?.close();
  });

  it('Esc Esc lists the points newest first; choosing one sends /rewind n and puts its message back in the prompt', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    for (const text of ['first question', 'second question', 'third question']) await say(chat, text);
    terminal.press(ESC_ESC);
    await terminal.waitFor('the rewind list', (s) => s.includes('Rewind to before'));
    const list = terminal.text.slice(terminal.text.lastIndexOf('Rewind to before'));
    const rows = ['1. third question', '2. second question', '3. first question'].map((row) => list.indexOf(row));
    assert.ok(
      rows.every((at, i) => at > 0 && (i === 0 || at > rows[i - 1]!)),
      `newest first:\n${list}`,
    );
    terminal.press(DOWN);
    terminal.press('\r');
    await terminal.waitFor('the rewind', (s) => /── rewound: \d+ messages? hidden ──/.test(s));
    assert.match(terminal.text, /❯ \/rewind 2\r?\n/, 'the command is shown as sent');
    await terminal.waitFor('the prompt refilled', (s) => lastPrompt(s) === '❯ second question');
    assert.equal(
      terminal.text.split('[/rewind] 1. third question').length,
      1,
      'the list is not shown again as a reply',
    );
    const requests = h.chatRequests().length;
    terminal.press('\r');
    await poll('the message sent again', () => h.chatRequests().length > requests);
    const sent = JSON.stringify(h.chatRequests().at(-1).messages);
    assert.match(sent, /second question/);
    assert.doesNotMatch(sent, /third question/, 'what came after the point is hidden from the model');
  });

  it('Esc Esc with no conversation yet says there is nothing to rewind', async () => {
    chat = await fakeChat(h.harness.url);
    chat.terminal.press(ESC_ESC);
    await chat.terminal.waitFor('the note', (s) =>
      s.includes('(nothing to rewind: the conversation has no messages yet)'),
    );
    assert.doesNotMatch(chat.terminal.text, /Rewind to before/);
  });

  it('after /fork the chat offers to go on in the new task; Yes goes on there', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    await say(chat, 'before the fork');
    terminal.press('/fork\r');
    await terminal.waitFor('the offer', (s) => s.includes('Go on in the forked task'));
    assert.doesNotMatch(terminal.text, /sub-task .* started/, 'a fork is not a sub-task');
    const taskId = /Go on in the forked task (\S+)\?/.exec(terminal.text)![1]!;
    terminal.press('\r');
    await terminal.waitFor('the switch', (s) => s.includes(`(switched to task ${taskId}`));
    await say(chat, 'in the fork');
    const client = await h.client('JSONRPC');
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    const texts = task.history.map((m) => m.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')); // prettier-ignore
    assert.deepEqual(
      texts,
      ['before the fork', 're: before the fork', 'in the fork', 're: in the fork'],
      'copied, then gone on in',
    );
  });

  it('after /fork, No stays in the conversation and says how to open the fork', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    await say(chat, 'stay here');
    terminal.press('/fork\r');
    await terminal.waitFor('the offer', (s) => s.includes('Go on in the forked task'));
    terminal.press(DOWN);
    terminal.press('\r');
    await terminal.waitFor('the answer', (s) =>
      /\(staying here; the fork is task \S+: npx tiny-harness chat .* --task/.test(s),
    );
  });

  it('after /compact, the compaction point is one line with its sizes', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    for (const text of ['one', 'two']) await say(chat, text);
    terminal.press('/compact\r');
    await terminal.waitFor('the line', (s) => /── conversation compacted: [\d,]+ → [\d,]+ characters ──/.test(s));
  });

  it('/context is drawn as a bar of the budget with its parts; on a narrow terminal as its text', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    await say(chat, 'measure me');
    terminal.press('/context\r');
    await terminal.waitFor('the bar', (s) => /\[\/context\] ▕[█▓▒▞░·]+▏ \d+% · \S+ of \S+ characters/.test(s));
    assert.match(
      terminal.text,
      /█ system prompt \S+ {2}▓ instructions \S+ {2}▒ tools \S+ {2}▞ summary \S+ {2}░ history/,
    );
    terminal.output.columns = 40;
    terminal.press('/context\r');
    await terminal.waitFor('the text', (s) => /\[\/context\] (?!▕)\S/.test(s));
  });
});

describe('tiny-harness chat: a compaction point and a rewind mark in a resumed conversation', () => {
  it('are drawn as one divider line each', () => {
    const terminal = new FakeTerminal();
    const screen = new ChatScreen(terminal.output, styleFor({ isTTY: false }));
    const message = (role: Role, text: string, metadata: Record<string, unknown> = {}) => ({
      messageId: text,
      taskId: 't',
      contextId: 'c',
      role,
      parts: [textPart(text)],
      metadata,
      extensions: [],
      referenceTaskIds: [],
    });
    const task: Task = {
      id: 't',
      contextId: 'c',
      status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: undefined, timestamp: undefined },
      artifacts: [],
      metadata: {},
      history: [
        message(Role.ROLE_AGENT, 'the summary', {
          [COMPACTION_KEY]: { upTo: 'x', model: 'fixture:small', charsBefore: 12345, charsAfter: 678 },
        }),
        message(Role.ROLE_USER, 'after the summary'),
        message(Role.ROLE_AGENT, 'rewound', { [REWIND_KEY]: { to: 'y', hidden: ['y', 'z'] } }),
      ],
    };
    screen.history(task);
    const lines = terminal.text.split('\n');
    assert.deepEqual(lines.slice(0, 3), [
      '── conversation compacted: 12,345 → 678 characters ──',
      '❯ after the summary',
      '── rewound: 2 messages hidden ──',
    ]);
    assert.doesNotMatch(terminal.text, /^the summary$/m, 'the summary itself is what the model is sent, not shown');
  });
});
