/**
 * Approval in one key (CMD-33, TOOL-5): a call waiting for approval shows `[y] yes  [a] always
 * for this conversation  [n] no (reason)` under the chat's prompt; one key sends `/approve <id>`,
 * `/approve always <id>` or `/deny <id> <reason>` as the command on the wire, and the chat
 * follows the resumed turn. Several waiting calls are asked for in turn; any other key leaves
 * the prompt for typing. The chat runs in this process on a pretend terminal, against the
 * harness, the fixture model and the fixture MCP server, whose `echo` needs approval.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { APPROVAL_KEYS_LINE } from '../../src/client/chat-approval.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { fakeChat, type FakeChat } from './fake-terminal.js';

let h: TestHarness;
let chat: FakeChat | undefined;

/** What was drawn since the last time `text` was typed and sent. */
const since = (drawn: string, text: string) => drawn.slice(drawn.lastIndexOf(`❯ ${text}`));

/** Sends `text` and waits for the keys under the call it makes wait. */
async function untilAsked(c: FakeChat, text: string): Promise<void> {
  c.terminal.press(`${text}\r`);
  await c.terminal.waitFor('the approval keys', (s) => since(s, text).includes(APPROVAL_KEYS_LINE));
}

describe('tiny-harness chat: approval in one key', () => {
  before(async () => {
    h = await startTestHarness({
      script: {
        toolCalls: (body) => {
          const last = lastMessage(body);
          if (last.role !== 'user') return undefined;
          if (last.content.includes('echo twice'))
            return [
              { name: 'fx_echo', arguments: { text: 'one' } },
              { name: 'fx_echo', arguments: { text: 'two' } },
            ];
          if (last.content.includes('please echo')) return [{ name: 'fx_echo', arguments: { text: 'hi' } }];
          return undefined;
        },
        reply: (body) =>
          lastMessage(body).role === 'tool' ? `done: ${lastMessage(body).content.slice(0, 60)}` : 'plain',
      },
      config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd(), approve: ['echo'] } } },
    });
  });

  afterEach(async () => {
    await chat?.close();
    chat = undefined;
  });

  after(async () => {
    await h?.close();
  });

  it('CMD-33: the keys are [y] yes  [a] always for this conversation  [n] no (reason)', () => {
    assert.equal(APPROVAL_KEYS_LINE, '[y] yes  [a] always for this conversation  [n] no (reason)');
  });

  it('CMD-33: y sends /approve <id> as the command, and the chat follows the resumed turn', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    await untilAsked(chat, 'please echo');
    assert.match(since(terminal.text, 'please echo'), /Allow fx_echo \{"text":"hi"\}\?/);
    terminal.press('y');
    await terminal.waitFor('the resumed turn', (s) => s.includes('done: echo: hi'));
    const after = since(terminal.text, 'please echo');
    assert.match(after, /❯ \/approve \S+\r?\n/, 'the command sent, shown as typed');
    assert.ok(after.includes('[/approve] Approved fx_echo. The turn resumes.'), after);
    assert.ok(after.includes('⚙ fx_echo {"text":"hi"} · succeeded · echo: hi'), after);
  });

  it('TOOL-5: a sends /approve always <id>; the next call to that tool in the conversation does not ask', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    await untilAsked(chat, 'please echo');
    terminal.press('a');
    await terminal.waitFor('the resumed turn', (s) => s.includes('done: echo: hi'));
    assert.match(since(terminal.text, 'please echo'), /❯ \/approve always \S+\r?\n/);
    assert.ok(since(terminal.text, 'please echo').includes('From now on fx_echo runs without asking'));
    terminal.press('please echo again\r');
    await terminal.waitFor('the second turn', (s) => since(s, 'please echo again').includes('done: echo: hi'));
    assert.ok(!since(terminal.text, 'please echo again').includes(APPROVAL_KEYS_LINE), 'not asked again');
  });

  it('CMD-33: n asks for a reason on one line and sends /deny <id> <reason>', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    await untilAsked(chat, 'please echo');
    terminal.press('n');
    await terminal.waitFor('the reason prompt', (s) => since(s, 'please echo').includes('reason (optional'));
    terminal.press('not now\r');
    await terminal.waitFor('the resumed turn', (s) => since(s, 'please echo').includes('done: '));
    const after = since(terminal.text, 'please echo');
    assert.match(after, /❯ \/deny \S+ not now\r?\n/);
    assert.ok(after.includes('[/deny] Denied fx_echo. The turn resumes.'), after);
  });

  it('CMD-33: several waiting calls are asked for in turn, each answer sent as it is given', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    await untilAsked(chat, 'echo twice');
    await terminal.waitFor('the first question', (s) => since(s, 'echo twice').includes('(1 of 2)'));
    terminal.press('y');
    await terminal.waitFor('the second question', (s) => since(s, 'echo twice').includes('(2 of 2)'));
    assert.ok(since(terminal.text, 'echo twice').includes('The turn resumes once every call has an answer.'));
    terminal.press('n');
    await terminal.waitFor('the reason prompt', (s) => since(s, 'echo twice').includes('reason (optional'));
    terminal.press('\r');
    await terminal.waitFor('the resumed turn', (s) => since(s, 'echo twice').includes('done: '));
    const after = since(terminal.text, 'echo twice');
    assert.match(after, /❯ \/approve \S+\r?\n[\s\S]*❯ \/deny \S+\r?\n/, 'one command per call, a deny with no reason');
    assert.ok(after.includes('· succeeded · echo: one'), after);
  });

  it('CMD-33: any other key leaves the prompt for typing, where /approve can be typed by hand', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    await untilAsked(chat, 'please echo');
    terminal.press('/');
    await terminal.waitFor(
      'the key typed at the prompt',
      (s) => s.lastIndexOf('❯ /') > s.lastIndexOf(APPROVAL_KEYS_LINE),
    );
    terminal.press('approve\r');
    await terminal.waitFor('the resumed turn', (s) => since(s, 'please echo').includes('done: echo: hi'));
    assert.ok(since(terminal.text, 'please echo').includes('❯ /approve\r\n'), 'typed, the key included');
  });
});
