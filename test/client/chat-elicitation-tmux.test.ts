/**
 * Issue 39: the shipped `tiny-harness chat`, in a tmux pane against the real harness and the
 * fixture MCP server over stdio, answers a form a tool call asks for: the question and its keys
 * show under the prompt, `a` reads each field on a line, and the resumed turn's reply follows.
 * A pane's capture drops trailing spaces, so each field's prompt is matched without its own.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { QUESTION_KEYS_LINE } from '../../src/client/chat-elicitation.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { reply, toolCalls } from '../e2e/elicitation-support.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { needs } from '../needs.js';
import { TMUX, Tmux, atPrompt, type ChatPane } from './support.js';

describe('tiny-harness chat in tmux: a tool call that asks (issue 39)', needs(TMUX), () => {
  let h: TestHarness;
  const tmux = new Tmux();
  let pane: ChatPane | undefined;

  before(async () => {
    h = await startTestHarness({
      script: { toolCalls, reply },
      config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd() } } },
    });
  });

  after(async () => {
    await pane?.kill();
    await tmux.close();
    await h?.close();
  });

  it('issue 39: a form is answered field by field in the shipped chat, and the turn resumes', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('please ask on fx');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(QUESTION_KEYS_LINE));
    assert.match(await pane.screen(), /fx asks: Who are you\?/);
    await pane.type('a');
    await pane.waitFor((s) => s.includes('name – Your name (string, required):'));
    await pane.type('Ada');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('age (number):'));
    await pane.type('36');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('admin (y/n):'));
    await pane.type('n');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('color (red/green):'));
    await pane.type('red');
    await pane.keys('Enter');
    await pane.waitFor(
      (s) =>
        s.replace(/\s+/g, '').includes('toolsaid:answeredaccept{"name":"Ada","age":36,"admin":false,"color":"red"}') &&
        atPrompt(s),
    );
  });
});
