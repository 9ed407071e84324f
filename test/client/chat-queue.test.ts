/**
 * The chat and the agent's queue (spec/while-busy-extension-v1.md): a message typed while a turn
 * runs goes to the task's queue on the agent, the screen says so, and its stream becomes its
 * turn's once the turn before it ends. The fixture model holds a reply whose prompt says "hold"
 * until the test lets it go, so every message here is typed while a turn surely runs.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lastMessage } from '../fixtures/model-server.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { poll } from '../support/wait.js';
import { PROMPT, TMUX, Tmux, atPrompt, lines, type ChatPane } from './support.js';

let h: TestHarness;
const tmux = new Tmux();
let pane: ChatPane | undefined;
/** Lets go of the replies held so far; each test holds its own. */
let held = deferred();

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const reply = (text: string) => `re: ${text} alpha beta gamma`;

/** A chat whose first turn is held after its first words. */
async function heldTurn(): Promise<ChatPane> {
  held = deferred();
  const chat = await tmux.chat(h.harness.url);
  await chat.type('hold on');
  await chat.keys('Enter');
  await chat.waitFor((s) => s.includes('re: hold'));
  return chat;
}

/** Types a message during the turn and waits for the screen to say where it is in the agent's queue. */
async function queue(chat: ChatPane, text: string, position: number): Promise<void> {
  await chat.type(text);
  await chat.keys('Enter');
  await chat.waitFor((s) => s.includes(`(queued on the agent, #${position}: ${text}; runs when the turn ends)`));
}

/** Where each wanted line is on the screen (-1 when it is not). */
function order(screen: string, ...wanted: string[]): number[] {
  const all = lines(screen);
  return wanted.map((line) => all.indexOf(line));
}

describe('tiny-harness chat: messages typed during a turn go to the agent queue', needs(TMUX), () => {
  before(async () => {
    h = await startTestHarness({
      script: {
        reply: (body) => reply(lastMessage(body).content),
        hold: (body) =>
          lastMessage(body).content.includes('hold') ? { afterChunks: 2, until: held.promise } : undefined,
      },
      config: { queue: { maxPerTask: 2 } },
    });
  });

  afterEach(async () => {
    held.resolve();
    await pane?.kill();
    pane = undefined;
  });

  after(async () => {
    held.resolve();
    await tmux.close();
    await h?.close();
  });

  it('while-busy: messages typed during a turn are queued on the agent (#1, #2; /status lists them), then run in order, each reply below its message', async () => {
    pane = await heldTurn();
    await queue(pane, 'first queued', 1);
    await queue(pane, 'second queued', 2);
    await pane.type('/status');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('Queued messages: 2') && s.includes('1. first queued'));
    held.resolve();
    const screen = await pane.waitFor((s) => s.includes(reply('second queued')) && atPrompt(s));
    // The /status reply shown while the held reply streamed went above its unfinished line, which stays whole.
    const at = order(
      screen,
      reply('hold on'),
      `${PROMPT} first queued`,
      reply('first queued'),
      `${PROMPT} second queued`,
      reply('second queued'),
    );
    assert.ok(
      at.every((n, i) => n >= 0 && (i === 0 || n > at[i - 1]!)),
      `in order, each once:\n${screen}`,
    );
    assert.doesNotMatch(screen, /sent when the turn ends/, 'none waited in the chat');
    const asked = h.chatRequests().map((body) => lastMessage(body).content);
    assert.deepEqual(asked.slice(-2), ['first queued', 'second queued'], 'the agent ran them in order');
  });

  it('while-busy: a message the agent refuses (queue_full) is shown as an error and given back, not lost', async () => {
    pane = await heldTurn();
    await queue(pane, 'one', 1);
    await queue(pane, 'two', 2);
    await pane.type('three is too many');
    await pane.keys('Enter');
    const screen = await pane.waitFor((s) => s.includes('(not queued; your message, to send again:)'));
    assert.match(screen.replace(/\n/g, ''), /error: the agent refused the request: .*queue\.maxPerTask/);
    assert.ok(lines(screen).includes('three is too many'), `the text is on the screen:\n${screen}`);
    held.resolve();
    const done = await pane.waitFor((s) => s.includes(reply('two')) && atPrompt(s));
    assert.doesNotMatch(done, new RegExp(reply('three is too many')), 'it was not run');
  });

  it('while-busy: Ctrl+C stops the running turn; the agent keeps its queue and the queued message runs, shown as its turn', async () => {
    pane = await heldTurn();
    await queue(pane, 'after the stop', 1);
    const aborted = h.model.aborted;
    await pane.keys('C-c');
    await h.model.waitForAborted(aborted + 1);
    const screen = await pane.waitFor((s) => s.includes(reply('after the stop')) && atPrompt(s));
    const at = order(screen, `${PROMPT} after the stop`, reply('after the stop'));
    assert.ok(at[0]! >= 0 && at[1]! > at[0]!, `the message above its reply:\n${screen}`);
    assert.ok(screen.indexOf('[/stop]') < screen.indexOf(`${PROMPT} after the stop`), 'run after the stop');
  });

  it('while-busy: /exit while a message is queued on the agent leaves at once, says it stays queued and how to see it; it runs', async () => {
    pane = await heldTurn();
    await queue(pane, 'runs without me', 1);
    await pane.type('/exit');
    await pane.keys('Enter');
    assert.equal(await pane.exited(), 0);
    const screen = (await pane.screen()).replace(/\n/g, ''); // the pane wraps long lines
    assert.match(screen, /\(stays queued on the agent: runs without me\)/);
    assert.match(
      screen,
      /\(1 message stays queued on the agent and runs in turn; to see it: npx tiny-harness chat \S+ --task [0-9a-f-]{36}, then \/status\)/,
    );
    assert.doesNotMatch(screen, /tiny-harness\/|while-busy|metadata/, 'no protocol words in what the user reads');
    const taskId = /--task ([0-9a-f-]{36})/.exec(screen)![1]!;
    held.resolve();
    const client = await h.client('JSONRPC');
    await poll('the queued message to have run', async () => {
      const task = await client.getTask({ tenant: '', id: taskId, historyLength: 10 });
      return JSON.stringify(task.history).includes(reply('runs without me'));
    });
  });
});
