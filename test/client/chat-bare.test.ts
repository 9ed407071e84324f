/**
 * `tiny-harness chat` against an agent without the Commands extension (the SDK alone), and
 * against one that goes away mid-conversation: it still chats, and errors are one line.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startBareAgent, type BareAgent } from './bare-agent.js';
import { needs } from '../needs.js';
import { PROMPT, TMUX, Tmux, type ChatPane } from './support.js';

let bare: BareAgent;
let release!: () => void;
const tmux = new Tmux();
let pane: ChatPane | undefined;

function lastLine(screen: string): string {
  return (
    screen
      .split('\n')
      .map((l) => l.trimEnd())
      .filter(Boolean)
      .at(-1) ?? ''
  );
}

describe('tiny-harness chat with other agents', needs(TMUX), () => {
  before(async () => {
    bare = await startBareAgent({ hold: new Promise<void>((resolve) => (release = resolve)) });
  });

  afterEach(async () => {
    await pane?.kill();
    pane = undefined;
  });

  after(async () => {
    release();
    await tmux.close();
    await bare?.close();
  });

  it("an agent without the commands extension chats, with the chat's own commands alone; a completed task is followed by a new one", async () => {
    pane = await tmux.chat(bare.url, ['--header', 'Authorization: Bearer chat-token']);
    assert.match(await pane.screen(), /lists no commands/);
    await pane.keys('/', 'Tab', 'Tab');
    const menu = await pane.waitFor((s) => s.includes('/exit — ') && s.includes('/help — '));
    assert.deepEqual(
      menu
        .split(`${PROMPT} /\n`)[1]!
        .trimEnd()
        .split('\n')
        .map((l) => l.split(' — ')[0]),
      ['/clear', '/new', '/exit', '/help'],
      "only the chat's commands, Tab completing none of them",
    );
    await pane.keys('C-u');
    await pane.type('first');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('echo: first') && lastLine(s) === PROMPT);
    // The task ended COMPLETED: the next message must go to a new task, or the agent would refuse it.
    await pane.type('second');
    await pane.keys('Enter');
    const screen = await pane.waitFor((s) => s.includes('echo: second') && lastLine(s) === PROMPT);
    assert.doesNotMatch(screen, /error/);
    assert.equal(screen.split('echo: first').length, 2, 'each reply is shown once');
    const sent = bare.requests.filter((r) => r.path !== '/' && r.headers.authorization === 'Bearer chat-token');
    assert.ok(sent.length >= 3, 'the card and both messages carried the header');
  });

  it('an agent without the while-busy extension: a message typed during a turn waits in the chat, said so, and is sent when the turn ends', async () => {
    pane = await tmux.chat(bare.url);
    await pane.type('hold');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(`${PROMPT} hold`));
    await pane.type('and then this');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('(queued: and then this; sent when the turn ends)'));
    release();
    const screen = await pane.waitFor((s) => s.includes('echo: and then this') && lastLine(s) === PROMPT);
    const at = ['echo: hold', `${PROMPT} and then this`, 'echo: and then this'].map((l) => screen.indexOf(l));
    assert.ok(at[0]! >= 0 && at[1]! > at[0]! && at[2]! > at[1]!, `sent once the turn ended:\n${screen}`);
  });

  it('an agent that went away is one error line, and the chat goes on', async () => {
    const other = await startBareAgent();
    try {
      pane = await tmux.chat(other.url);
    } finally {
      await other.close();
    }
    await pane.type('anyone?');
    await pane.keys('Enter');
    const screen = await pane.waitFor((s) => /error: /.test(s) && lastLine(s) === PROMPT);
    const errors = screen.split('\n').filter((l) => l.includes('error'));
    assert.deepEqual(errors, [`error: cannot reach ${other.url} (connection refused)`]);
    assert.doesNotMatch(screen, /\n\s+at /, 'no stack trace');
    await pane.keys('C-d');
    assert.equal(await pane.exited(), 0);
  });
});
