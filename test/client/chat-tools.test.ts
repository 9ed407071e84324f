/**
 * `tiny-harness chat` with tools, in a terminal (a tmux pane on a private socket): each tool
 * call on one line, and a call waiting for approval answered with one key, or with /approve typed
 * (TOOL-1, CMD-33).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { needs } from '../needs.js';
import { APPROVAL_KEYS_LINE } from '../../src/client/chat-approval.js';
import { TMUX, Tmux, atPrompt, lines, type ChatPane } from './support.js';

describe('tiny-harness chat with tools', needs(TMUX), () => {
  let tools: TestHarness;
  const toolTmux = new Tmux();
  let toolPane: ChatPane | undefined;

  before(async () => {
    tools = await startTestHarness({
      script: {
        toolCalls: (body) => {
          const last = lastMessage(body);
          if (last.role !== 'user') return undefined;
          if (last.content.includes('please fail')) return [{ name: 'fx_fail', arguments: {} }];
          if (last.content.includes('please echo')) return [{ name: 'fx_echo', arguments: { text: 'hi' } }];
          return undefined;
        },
        reply: (body) =>
          lastMessage(body).role === 'tool' ? `done: ${lastMessage(body).content.slice(0, 40)}` : 'plain',
      },
      config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd(), approve: ['echo'] } } },
    });
  });

  after(async () => {
    await toolPane?.kill();
    await toolTmux.close();
    await tools?.close();
  });

  it('TOOL-1: each tool call is one line, with its input, status and result', async () => {
    toolPane = await toolTmux.chat(tools.harness.url);
    await toolPane.type('please fail');
    await toolPane.keys('Enter');
    const screen = await toolPane.waitFor((s) => s.includes('done: the fixture tool failed') && atPrompt(s));
    const callLines = lines(screen).filter((l) => l.includes('fx_fail'));
    assert.deepEqual(
      callLines,
      ['⚙ fx_fail {} · failed · the fixture tool failed on purpose'],
      'the running line was replaced by how the call ended',
    );
  });

  it('CMD-33: a call waiting for approval is answered with one key: y sends /approve <id> and the turn resumes', async () => {
    await toolPane?.kill();
    toolPane = await toolTmux.chat(tools.harness.url);
    await toolPane.type('please echo');
    await toolPane.keys('Enter');
    await toolPane.waitFor((s) => lines(s).at(-1) === APPROVAL_KEYS_LINE && s.includes('Allow fx_echo {"text":"hi"}?'));
    await toolPane.keys('y');
    const screen = await toolPane.waitFor((s) => s.includes('done: echo: hi') && atPrompt(s));
    assert.match(screen, /❯ \/approve \S+\n/, 'the command, as sent');
    assert.ok(screen.includes('[/approve] Approved fx_echo. The turn resumes.'), screen);
  });

  it('CMD-33: a call waiting for approval shows how to answer; /approve typed instead completes from the card and resumes the turn', async () => {
    await toolPane?.kill();
    toolPane = await toolTmux.chat(tools.harness.url);
    await toolPane.type('please echo');
    await toolPane.keys('Enter');
    await toolPane.waitFor(
      (s) =>
        s.includes('⚙ fx_echo {"text":"hi"} · awaiting approval') &&
        s.includes('Answer with /approve') &&
        lines(s).at(-1) === APPROVAL_KEYS_LINE,
    );
    // A key that answers nothing leaves the question for the prompt, where it is typed.
    await toolPane.type('/appr');
    await toolPane.keys('Tab');
    await toolPane.keys('Enter');
    const screen = await toolPane.waitFor((s) => s.includes('done: echo: hi') && atPrompt(s));
    assert.ok(screen.includes('[/approve] Approved fx_echo. The turn resumes.'), screen);
    assert.ok(screen.includes('⚙ fx_echo {"text":"hi"} · succeeded · echo: hi'), screen);
  });
});
