/**
 * Ctrl+C twice in quick succession leaves the chat, even when the first press stopped a turn
 * and a queued message's turn started before the second: a person's double press is some
 * tenths of a second apart, long enough for that. The chat runs in this process on a pretend
 * terminal whose clock the test sets, against the real harness and the fixture model, which
 * holds every reply whose prompt says "hold".
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lastMessage } from '../fixtures/model-server.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { fakeChat, type FakeChat, type FakeTerminal } from './fake-terminal.js';

const reply = (text: string) => `re: ${text} alpha beta gamma`;
let h: TestHarness;
let release = () => {};
let chat: FakeChat | undefined;

/** A chat whose turn is held, with a second held message queued on the agent behind it. */
async function queuedBehindHeldTurn(): Promise<FakeChat> {
  chat = await fakeChat(h.harness.url);
  chat.terminal.press('hold on\r');
  await chat.terminal.waitFor('the held reply', (s) => s.includes('re: hold'));
  chat.terminal.press('hold the queued one\r');
  await chat.terminal.waitFor('the queued note', (s) => s.includes('(queued on the agent, #1: hold the queued one'));
  return chat;
}

/** The queued message's turn has started: the chat shows the message, as typed, above its reply. */
async function startOfQueuedTurn(terminal: FakeTerminal): Promise<void> {
  await terminal.waitFor('the queued turn', (s) => s.includes('❯ hold the queued one\r\n'));
}

/** How many times the chat said it was stopping a turn. */
const stops = (text: string) => text.split('^C stopping the turn').length - 1;

describe('tiny-harness chat: Ctrl+C twice', () => {
  before(async () => {
    h = await startTestHarness({
      script: {
        reply: (body) => reply(lastMessage(body).content),
        hold: (body) =>
          lastMessage(body).content.includes('hold')
            ? { afterChunks: 2, until: new Promise<void>((resolve) => (release = resolve)) }
            : undefined,
      },
      config: { queue: { maxPerTask: 2 } },
    });
  });

  afterEach(async () => {
    release();
    await chat?.close();
    chat = undefined;
  });

  after(async () => {
    release();
    await h?.close();
  });

  it('two Ctrl+C 0.3 s apart leave, though the first stopped the turn and the queued message started its own in between', async () => {
    const { terminal, exited } = await queuedBehindHeldTurn();
    terminal.time = 10_000;
    terminal.press('\x03');
    await startOfQueuedTurn(terminal);
    terminal.time = 10_300;
    terminal.press('\x03');
    const outcome = await Promise.race([
      exited.then((code) => `exited ${code}`),
      terminal.waitFor('a second stop', (s) => stops(s) === 2).then(() => 'stopped the queued turn'),
    ]);
    assert.equal(outcome, 'exited 0');
    assert.equal(stops(terminal.text), 1, `the queued message's turn was not stopped:\n${terminal.text}`);
    assert.match(terminal.text, /\(stays queued on the agent|resume it with/);
  });

  it('two Ctrl+C more than a second apart are two stops: the queued turn is stopped too, and the chat stays', async () => {
    const { terminal, exited } = await queuedBehindHeldTurn();
    terminal.time = 10_000;
    terminal.press('\x03');
    await startOfQueuedTurn(terminal);
    terminal.time = 11_500;
    terminal.press('\x03');
    await terminal.waitFor('the second stop', (s) => stops(s) === 2 && s.split('[/stop]').length === 3);
    terminal.time = 20_000;
    terminal.press('\x04'); // Ctrl+D leaves
    assert.equal(await exited, 0);
  });
});
