/**
 * Opening `tiny-harness chat`: what the chat settles before it says it is connected. In this
 * process on a pretend terminal, against the real harness and the fixture model.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { fakeChat, type FakeChat } from './fake-terminal.js';

let h: TestHarness;
let chat: FakeChat | undefined;

describe('tiny-harness chat: opening', () => {
  before(async () => {
    h = await startTestHarness({ script: { reply: 'hello' } });
  });

  afterEach(async () => {
    await chat?.close();
    chat = undefined;
  });

  after(async () => {
    await h?.close();
  });

  it("the terminal is in raw mode before the welcome shows: keys typed at once are the chat's, never taken as a line by the terminal", async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    assert.ok(terminal.rawFrom !== undefined, 'raw mode is on');
    assert.ok(terminal.drawn.indexOf('Connected to') >= terminal.rawFrom, `the welcome after it:\n${terminal.drawn}`);
  });
});
