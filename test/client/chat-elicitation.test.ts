/**
 * A tool call's question in the terminal chat (issue 39, TOOL-5): a form asked by the fixture
 * MCP server shows `[a] answer  [d] decline  [c] cancel`; `a` reads each field on a line of its
 * own, sends the answer as the wire's data part, and the chat follows the resumed turn. The chat
 * runs in this process on a pretend terminal, against the harness and the fixture MCP server.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { QUESTION_KEYS_LINE, parseField } from '../../src/client/chat-elicitation.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { reply, toolCalls } from '../e2e/elicitation-support.js';
import { fakeChat, type FakeChat } from './fake-terminal.js';

let h: TestHarness;
let chat: FakeChat | undefined;

describe('tiny-harness chat: a tool call that asks (issue 39)', () => {
  before(async () => {
    h = await startTestHarness({
      script: { toolCalls, reply },
      config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd() } } },
    });
  });

  afterEach(async () => {
    await chat?.close();
    chat = undefined;
  });

  after(async () => {
    await h?.close();
  });

  it('issue 39 / TOOL-5: a form is answered field by field in the chat; the call gets the answer and the turn resumes', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    terminal.press('please ask on fx\r');
    await terminal.waitFor('the question keys', (s) => s.includes(QUESTION_KEYS_LINE));
    assert.match(terminal.text, /fx asks: Who are you\?/);
    terminal.press('a');
    await terminal.waitFor('the first field', (s) => s.includes('name – Your name (string, required): '));
    terminal.press('Ada\r');
    await terminal.waitFor('the number field', (s) => s.includes('age (number): '));
    terminal.press('old\r'); // not a number: asked again
    await terminal.waitFor('the number field again', (s) => s.split('age (number): ').length > 2);
    terminal.press('36\r');
    await terminal.waitFor('the boolean field', (s) => s.includes('admin (y/n): '));
    terminal.press('y\r');
    await terminal.waitFor('the enum field', (s) => s.includes('color (red/green): '));
    terminal.press('green\r');
    await terminal.waitFor('the resumed turn', (s) =>
      s.includes('tool said: answered accept {"name":"Ada","age":36,"admin":true,"color":"green"}'),
    );
  });

  it('issue 39: d declines the question', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    terminal.press('please ask on fx\r');
    await terminal.waitFor('the question keys', (s) => s.includes(QUESTION_KEYS_LINE));
    terminal.press('d');
    await terminal.waitFor('the resumed turn', (s) => s.includes('tool said: answered decline {}'));
  });

  it('issue 39: a field typed is read by its type', () => {
    assert.equal(parseField('12', { type: 'integer' }), 12);
    assert.equal(parseField('1.5', { type: 'integer' }), undefined);
    assert.equal(parseField('no', { type: 'boolean' }), false);
    assert.equal(parseField('blue', { type: 'string', enum: ['red'] }), undefined);
  });
});
