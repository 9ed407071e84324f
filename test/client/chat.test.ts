/**
 * `tiny-harness chat` used as a person uses it: in a terminal (a tmux pane on a private
 * socket), keys sent, the screen read back, against the real harness and the fixture model.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { PROMPT, TMUX, Tmux, atPrompt, lines, type ChatPane } from './support.js';

const ANSWER = 'one two three four five six seven eight nine ten';
const LONG = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
const MARKDOWN = 'Use **bold** and `code`:\n- first\n- second\n';

let h: TestHarness;
const tmux = new Tmux();
let pane: ChatPane | undefined;

/** A chat whose turn streams slowly, a few words in already. */
async function slowTurn(): Promise<ChatPane> {
  const chat = await tmux.chat(h.harness.url);
  await chat.type('a slow answer please');
  await chat.keys('Enter');
  await chat.waitFor((s) => s.includes('word2 '));
  return chat;
}

describe('tiny-harness chat', needs(TMUX), () => {
  before(async () => {
    h = await startTestHarness({
      script: {
        reply: (body) => {
          const last = JSON.stringify(body.messages.at(-1));
          return last.includes('slow') ? LONG : last.includes('markdown') ? MARKDOWN : ANSWER;
        },
        chunkDelayMs: 80,
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

  it('typing / shows the commands under the prompt with their hints and descriptions, one menu updated in place; /mo and Tab completes to /model', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('/');
    const screen = await pane.waitFor((s) => s.includes('/spawn <instruction> — '));
    for (const line of [
      '/help [<command>] — ',
      '/model [<model>] — Show or choose',
      '/status — ',
      '/spawn <instruction> — Start a sub-task',
      '/compact [<focus>] — Summarise the conversation',
    ]) {
      assert.ok(screen.includes(line), `missing ${line} in:\n${screen}`);
    }
    // More than the menu's lines: the rest (the chat's own /clear and /exit among them) are counted.
    assert.match(screen, /… \d+ more \(type to narrow\)/);
    assert.equal(lines(screen).filter((l) => l === `${PROMPT} /`).length, 1, 'the prompt above the menu, once');

    await pane.type('s');
    const narrowed = await pane.waitFor((s) => !s.includes('/model [<model>]') && s.includes('/spawn <instruction>'));
    const menu = lines(narrowed).slice(lines(narrowed).indexOf(`${PROMPT} /s`) + 1);
    assert.deepEqual(
      menu.map((l) => l.split(' ')[0]),
      ['/status', '/stop', '/spawn', '/schedule', '/skills'],
      'the one menu, updated in place: no earlier menu left above',
    );
    assert.equal(narrowed.split('/help [<command>]').length, 1, 'no menu piles up');
    await pane.keys('Tab'); // /status, /stop and /spawn share no more than /s: nothing changes
    await pane.keys('C-u');
    await pane.waitFor((s) => atPrompt(s));
    await pane.type('/ex');
    await pane.waitFor((s) => s.includes('/exit — Leave the chat'));
    await pane.keys('C-u');
    await pane.waitFor((s) => atPrompt(s));

    await pane.type('/mo');
    await pane.keys('Tab');
    await pane.type('x'); // proves the space after the completed name
    await pane.waitFor((s) => lines(s).includes(`${PROMPT} /model x`));
  });

  it('a question shows the answer as it streams, then the prompt again', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('count for me');
    await pane.keys('Enter');
    // Part of the answer is on the screen before the rest has arrived.
    await pane.waitFor((s) => s.includes('one two') && !s.includes('ten'));
    const screen = await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    assert.equal(screen.split(ANSWER).length, 2, 'the answer is shown once');
  });

  it('/status shows a reply marked with its name; the conversation stays in one task', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('hello');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    await pane.type('/status');
    await pane.keys('Enter');
    const first = await pane.waitFor((s) => /\[\/status\] Task \S+/.test(s) && atPrompt(s));
    const taskId = /\[\/status\] Task (\S+)/.exec(first)![1]!;
    assert.match(first, /Turn running: no/);
    assert.doesNotMatch(first.split('[/status]')[1]!, new RegExp(ANSWER), 'the previous answer is not shown again');

    await pane.type('and again');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.split(ANSWER).length === 3 && atPrompt(s));
    await pane.keys('C-l'); // a clear screen, so the next reply is the only one on it
    await pane.type('/status');
    await pane.keys('Enter');
    const second = await pane.waitFor((s) => /\[\/status\] Task \S+/.test(s) && atPrompt(s));
    assert.equal(/\[\/status\] Task (\S+)/.exec(second)![1], taskId);
    const sent = h.chatRequests().at(-1);
    assert.match(JSON.stringify(sent.messages), /hello[\s\S]*and again/, 'the second question went to the same task');
  });

  it('/spawn says the sub-task started and shows its result when it ends', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('/spawn count to ten');
    await pane.keys('Enter');
    const started = await pane.waitFor((s) => /sub-task (\S+) started/.test(s));
    const id = /sub-task (\S+) started/.exec(started)![1]!;
    assert.match(started, /\[\/spawn\] /);
    const ended = await pane.waitFor((s) => s.includes(`sub-task ${id} completed:\n${ANSWER}`) && atPrompt(s));
    assert.ok(ended);
  });

  it('CMD-32: Ctrl+C during a turn stops it (/stop): the model request is aborted, the partial reply kept, and the conversation goes on in the same task', async () => {
    pane = await tmux.chat(h.harness.url);
    const aborted = h.model.aborted;
    await pane.type('a slow answer please');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('word2 '));
    await pane.keys('C-c');
    const stopped = await pane.waitFor((s) => s.includes('[stopped by the user]') && atPrompt(s));
    assert.ok(stopped.includes('[/stop] Stopping the turn'), stopped);
    await h.model.waitForAborted(aborted + 1);
    assert.doesNotMatch(await pane.screen(), /word99/);

    await pane.type('still there?');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    assert.doesNotMatch(await pane.screen(), /error/);
    const sent = JSON.stringify(h.chatRequests().at(-1).messages);
    assert.match(sent, /a slow answer please/, 'the conversation goes on');
    assert.match(sent, /stopped by the user/, 'with the partial reply, marked');
  });

  it('a second Ctrl+C during the same turn leaves the chat', async () => {
    pane = await slowTurn();
    await pane.keys('C-c');
    await pane.keys('C-c');
    assert.equal(await pane.exited(), 0);
  });

  it('a command typed while a turn runs is answered at once, and the turn goes on', async () => {
    pane = await slowTurn();
    await pane.type('/status');
    await pane.keys('Enter');
    const screen = await pane.waitFor((s) => s.includes('[/status] Task') && s.includes('Turn running: yes'));
    assert.equal(screen.split('[/status]').length, 2, 'the reply is shown once');
    const last = Math.max(...[...screen.matchAll(/word(\d+)/g)].map((m) => Number(m[1])));
    assert.ok(last < 99, 'the reply came while the turn still ran');
    // The turn goes on streaming after the reply (then Ctrl+C ends it, to keep the test short).
    await pane.waitFor((s) => s.includes(`word${last + 5} `));
    await pane.keys('C-c');
    await pane.waitFor((s) => s.includes('[/stop] Stopping the turn') && atPrompt(s));
  });

  it('a command reply during a streaming reply is printed between its lines, never inside a run of words', async () => {
    pane = await slowTurn();
    await pane.type('/status');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('Turn running: yes'));
    await pane.keys('C-c');
    await pane.waitFor((s) => s.includes('[/stop] Stopping the turn') && atPrompt(s));
    const screen = lines(await pane.screen({ joined: true }));
    const runs = screen.filter((line) => /\bword\d+\b/.test(line));
    assert.equal(runs.length, 1, `the words streamed are one line:\n${screen.join('\n')}`);
    assert.match(runs[0]!, /^word0 word1 word2 .*word\d+$/);
    assert.ok(
      screen.findIndex((line) => line.startsWith('[/status]')) < screen.indexOf(runs[0]!),
      'the reply above it',
    );
  });

  it('a reply is rendered as light Markdown: no ** or ` markers, bullets for list items', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('some markdown please');
    await pane.keys('Enter');
    const screen = await pane.waitFor((s) => s.includes('• second') && atPrompt(s));
    assert.ok(lines(screen).includes('Use bold and code:'), screen);
    assert.ok(lines(screen).includes('• first'), screen);
    const styled = await pane.screen({ escapes: true });
    assert.ok(styled.includes('\x1b[1mbold'), 'bold in bold');
  });

  it('Ctrl+C at an empty prompt exits 0; Ctrl+C with text typed clears it', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('half a thought');
    await pane.keys('C-c');
    await pane.waitFor((s) => atPrompt(s) && !s.includes('half a thought'));
    await pane.keys('C-c');
    assert.equal(await pane.exited(), 0);
  });

  it('on leaving, chat prints how to resume; --task shows the conversation so far and goes on in that task', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.type('my name is Ada');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    await pane.keys('C-d');
    // The pane wraps long lines: read the screen as one line.
    const unwrapped = (s: string) => s.replace(/\n/g, '');
    const left = await pane.waitFor((s) =>
      /resume it with: npx tiny-harness chat \S+ --task [0-9a-f-]{36}/.test(unwrapped(s)),
    );
    const taskId = /--task ([0-9a-f-]{36})/.exec(unwrapped(left))![1]!;
    await pane.kill();

    pane = await tmux.chat(h.harness.url, ['--task', taskId]);
    const resumed = await pane.waitFor((s) => s.includes(`(resumed task ${taskId})`) && atPrompt(s));
    assert.ok(resumed.includes(`${PROMPT} my name is Ada`) && resumed.includes(ANSWER), resumed);
    await pane.type('and now?');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.split(ANSWER).length === 3 && atPrompt(s));
    assert.match(JSON.stringify(h.chatRequests().at(-1).messages), /my name is Ada/, 'the same conversation');
  });

  it('an unknown /command is asked about first (did you mean?); "y" sends it to the model, anything else does not', async () => {
    pane = await tmux.chat(h.harness.url);
    const before = h.chatRequests().length;
    await pane.type('/modle fixture:large');
    await pane.keys('Enter');
    await pane.waitFor(
      (s) =>
        s.includes('/modle is not a command (did you mean /model?). Send it to the model anyway? [y/N]') && atPrompt(s),
    );
    await pane.type('n');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('(not sent)') && atPrompt(s));
    assert.equal(h.chatRequests().length, before, 'nothing reached the model');
    await pane.type('/modle please');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.split('Send it to the model anyway?').length === 3);
    await pane.type('y');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    assert.match(
      JSON.stringify(h.chatRequests().at(-1).messages),
      /\/modle please/,
      'sent as an ordinary message (CMD-3)',
    );
  });

  it('Ctrl+D exits 0', async () => {
    pane = await tmux.chat(h.harness.url);
    await pane.keys('C-d');
    assert.equal(await pane.exited(), 0);
  });
});
