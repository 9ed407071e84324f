/**
 * Opening `tiny-harness chat`: what the chat settles before it says it is connected. In this
 * process on a pretend terminal, against the real harness and the fixture model.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { fakeChat, type FakeChat } from './fake-terminal.js';
import { runCliWithInput } from './support.js';

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

describe('tiny-harness chat: an agent whose card asks for a token', () => {
  const TOKEN = 'alice-token-0123456789abcdef';
  let secured: TestHarness;

  before(async () => {
    secured = await startTestHarness({
      script: { reply: 'hello' },
      harness: { auth: { tokens: new Map([[TOKEN, 'alice']]) } },
    });
  });

  after(async () => {
    await secured?.close();
  });

  it('without a token the chat does not say it is connected: it exits 1 saying how to pass one', async () => {
    const result = await runCliWithInput(['chat', secured.harness.url], '');
    assert.equal(result.code, 1, result.stderr);
    assert.doesNotMatch(result.stdout, /Connected/);
    assert.equal(
      result.stderr,
      `error: the agent at ${secured.harness.url} needs a token: pass it with --header "Authorization: Bearer <token>" or --token, --token-command, TINY_HARNESS_TOKEN\n`,
    );
  });

  it('with a token it refuses, the chat exits 1 saying the token was refused; with a good one it connects', async () => {
    const refused = await runCliWithInput(
      ['chat', secured.harness.url, '--header', 'Authorization: Bearer not-a-token-0123456789abcdef'],
      '',
    );
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      /^error: the agent at \S+ refused the token given with --header Authorization \(.+\)\n$/,
    );
    const accepted = await runCliWithInput(
      ['chat', secured.harness.url, '--header', `Authorization: Bearer ${TOKEN}`],
      '',
    );
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.match(accepted.stdout, /^Connected to tiny-harness/);
  });
});
