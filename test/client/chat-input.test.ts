/**
 * What is typed at the chat's prompt, in a terminal (a tmux pane on a private socket): a message
 * of several lines (a bracketed paste, Alt+Enter, `\` before Enter), the chat's own commands,
 * and the prompt kept apart from what streams above it.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { poll } from '../support/wait.js';
import { PROMPT, TMUX, Tmux, atPrompt, lines, type ChatPane } from './support.js';

const ANSWER = 'one two three four five six seven eight nine ten';
const LONG = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
const QUOTE = 'As they say:\n> a quoted line\nand back.\n';

let h: TestHarness;
const tmux = new Tmux();
let pane: ChatPane | undefined;

/** What the user's messages to the model were, in order. */
function userMessages(): string[] {
  const last = h.chatRequests().at(-1);
  return (last?.messages ?? [])
    .filter((m: { role: string }) => m.role === 'user')
    .map((m: { content: unknown }) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

describe('tiny-harness chat input', needs(TMUX), () => {
  before(async () => {
    h = await startTestHarness({
      script: {
        reply: (body) => {
          const last = JSON.stringify(body.messages.at(-1));
          return last.includes('slow') ? LONG : last.includes('quote') ? QUOTE : ANSWER;
        },
        chunkDelayMs: 40,
      },
    });
  });

  afterEach(async () => {
    await pane?.kill();
    pane = undefined;
  });

  after(async () => {
    await tmux.close();
    await h?.close();
  });

  it('a bracketed paste of three lines is one message and one turn', async () => {
    pane = await tmux.chat(h.harness.url);
    const before = h.chatRequests().length;
    await pane.paste('line one\nline two\nline three');
    const typed = await pane.waitFor((s) => s.includes('line three'));
    assert.ok(lines(typed).includes(`${PROMPT} line one`), typed);
    assert.equal(h.chatRequests().length, before, 'nothing sent before Enter');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    assert.equal(h.chatRequests().length, before + 1, 'one turn');
    assert.equal(userMessages().at(-1), 'line one\nline two\nline three');
  });

  it('Alt+Enter and a \\ before Enter start a new line of the same message', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('first');
    await pane.keys('M-Enter');
    await pane.type('second');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    assert.equal(userMessages().at(-1), 'first\nsecond');

    await pane.type('third\\');
    await pane.keys('Enter');
    await pane.type('fourth');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.split(ANSWER).length === 3 && atPrompt(s));
    assert.equal(userMessages().at(-1), 'third\nfourth');
  });

  it('/clear starts a new conversation: a new task in a new context, the screen cleared', async () => {
    pane = await tmux.chat(h.harness.url);
    const statusTask = async () => {
      await pane!.type('/status');
      await pane!.keys('Enter');
      const screen = await pane!.waitFor((s) => /\[\/status\] Task \S+/.test(s) && atPrompt(s));
      const id = /\[\/status\] Task (\S+)/.exec(screen)![1]!;
      return (await client.getTask({ tenant: '', id, historyLength: 0 })).contextId;
    };
    const client = await h.client('JSONRPC');
    await pane.type('remember the word pelican');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    const before = await statusTask();
    await pane.type('/clear');
    await pane.keys('Enter');
    const cleared = await pane.waitFor((s) => s.includes('(a new conversation') && atPrompt(s));
    assert.doesNotMatch(cleared, /pelican/, 'the screen was cleared');
    await pane.type('what was the word?');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    assert.deepEqual(userMessages(), ['what was the word?'], 'the model sees nothing of the earlier conversation');
    assert.notEqual(await statusTask(), before, 'a new context');
  });

  it('/exit leaves the chat, as Ctrl+D does, and sends nothing', async () => {
    pane = await tmux.chat(h.harness.url);
    const before = h.chatRequests().length;
    await pane.type('/exit');
    await pane.keys('Enter');
    assert.equal(await pane.exited(), 0);
    assert.equal(h.chatRequests().length, before);
  });

  it("/help shows the agent's commands, then the chat's own apart from them", async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('/help');
    await pane.keys('Enter');
    const screen = await pane.waitFor((s) => s.includes("This chat's own commands") && atPrompt(s));
    const agent = screen.indexOf('[/help]');
    const own = screen.indexOf("This chat's own commands");
    assert.ok(agent !== -1 && agent < own, "the chat's commands come after the agent's reply");
    const section = screen.slice(own);
    for (const name of ['/clear', '/new', '/exit']) assert.match(section, new RegExp(`\\n\\s+${name} — `));
    assert.doesNotMatch(screen, /not a command|Send it to the model/);
  });

  it('a block quote in a reply is shown behind a bar, never as the prompt', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('a quote please');
    await pane.keys('Enter');
    const screen = await pane.waitFor((s) => s.includes('and back.') && atPrompt(s));
    assert.ok(lines(screen).includes('│ a quoted line'), screen);
    assert.ok(!lines(screen).some((l) => l.startsWith('> ')), 'no line looks like the old prompt');
  });

  it('keys typed while a reply streams stay on the prompt, never inside the streamed text', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('a slow answer please');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('word2 '));
    for (const word of ['typed ', 'while ', 'streaming']) await pane.type(word);
    const screen = await pane.waitFor(
      (s) => s.includes('word99') && atPrompt(s.replace(/ typed while streaming$/m, '')),
    );
    const rows = lines(screen);
    assert.equal(rows.at(-1), `${PROMPT} typed while streaming`, 'what was typed waits at the prompt');
    const streamed = rows.slice(0, -1).join('').replace(/\s+/g, '');
    assert.ok(streamed.includes(LONG.replace(/\s+/g, '')), `the reply is whole and in order:\n${screen}`);
    assert.doesNotMatch(streamed, /typed/, 'nothing typed is inside the reply');
  });

  it('wide characters (CJK, emoji) take two columns: the cursor stays right after what was typed, also on a wrapped row', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('你好😀');
    const typed = await pane.waitFor((s) => lines(s).at(-1) === `${PROMPT} 你好😀`);
    const promptRow = lines(typed).length - 1;
    assert.deepEqual(await pane.cursor(), { x: 2 + 4 + 2, y: promptRow }, 'after the emoji');
    await pane.keys('Left', 'Left');
    await poll('the cursor two characters back', async () => (await pane!.cursor()).x === 4);
    await pane.type('x');
    await pane.waitFor((s) => lines(s).at(-1) === `${PROMPT} 你x好😀`);
    assert.deepEqual(await pane.cursor(), { x: 5, y: promptRow }, 'after the x put between 你 and 好');

    // 120 columns: "❯ a" and 58 wide characters end at column 118; the 59th does not fit in the
    // last column and starts the next row, as the terminal puts it.
    await pane.keys('C-e', 'C-u');
    await pane.type(`a${'字'.repeat(60)}`);
    const wrapped = await pane.waitFor((s) => lines(s).at(-1) === '字字');
    assert.equal(lines(wrapped).at(-2), `${PROMPT} a${'字'.repeat(58)}`);
    assert.deepEqual(await pane.cursor(), { x: 4, y: lines(wrapped).length - 1 });
  });
});
