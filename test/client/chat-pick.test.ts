/**
 * Going on in a past conversation without its id: `chat --continue` opens the user's latest
 * one, `chat --resume` lists their recent ones (ListTasks, titled by the first message, as the
 * page's "Recent" does) to choose one with the arrow keys. In a tmux pane, against the real
 * harness and the fixture model.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { titleOf } from '../../src/recent-tasks.js';
import { ago } from '../../src/client/task-picker.js';
import { lastMessage } from '../fixtures/model-server.js';
import { send, startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { PROMPT, TMUX, Tmux, atPrompt, lines, runCli, runCliWithInput, type ChatPane } from './support.js';

const LONG_FIRST = 'apples are red, and this first message goes on for long enough to be cut down to a title';
const MESSAGES = [LONG_FIRST, 'bananas are yellow', 'cherries are dark'];

let h: TestHarness;
const tmux = new Tmux();
let pane: ChatPane | undefined;
/** The tasks of MESSAGES, oldest first. */
const ids: string[] = [];

describe('tiny-harness chat --continue and --resume', needs(TMUX), () => {
  before(async () => {
    h = await startTestHarness({ script: { reply: (body) => `noted: ${lastMessage(body).content}` } });
    const client = await h.client('JSONRPC');
    for (const text of MESSAGES) ids.push((await send(client, text)).id);
  });

  afterEach(async () => {
    await pane?.kill();
    pane = undefined;
  });

  after(async () => {
    await tmux.close();
    await h?.close();
  });

  it('--continue goes on in the latest conversation: its messages shown, the next one sent in it', async () => {
    pane = await tmux.chat(h.harness.url, ['--continue']);
    const screen = await pane.waitFor((s) => s.includes(`(resumed task ${ids[2]})`) && atPrompt(s));
    assert.ok(lines(screen).includes(`${PROMPT} cherries are dark`), screen);
    await pane.type('and then?');
    await pane.keys('Enter');
    await pane.waitFor((s) => s.includes('noted: and then?') && atPrompt(s));
    assert.match(JSON.stringify(h.chatRequests().at(-1).messages), /cherries are dark[\s\S]*and then\?/);
  });

  it('--resume lists the recent conversations newest first, titled by their first message cut at a word; Down and Enter open the one chosen', async () => {
    pane = await tmux.cli(['chat', h.harness.url, '--resume'], 'Resume a conversation');
    const list = lines(await pane.waitFor((s) => s.includes('apples are red')));
    const rows = list.slice(list.findIndex((l) => l.startsWith('Resume a conversation')) + 1);
    assert.match(rows[0]!, /^❯ cherries are dark +input required · just now$/);
    assert.match(rows[1]!, /^ {2}bananas are yellow +input required · just now$/);
    assert.ok(rows[2]!.startsWith(`  ${titleOf(LONG_FIRST)} `), rows[2]);
    assert.ok(titleOf(LONG_FIRST).endsWith(' long…'), 'cut at a word');
    await pane.keys('Down');
    await pane.waitFor((s) => s.includes('❯ bananas are yellow'));
    await pane.keys('Enter');
    const screen = await pane.waitFor((s) => s.includes(`(resumed task ${ids[1]})`) && atPrompt(s));
    assert.ok(lines(screen).includes('noted: bananas are yellow'), screen);
    assert.doesNotMatch(screen, /cherries|Resume a conversation/, 'the list is gone');
  });

  it('--resume with Escape starts a new conversation', async () => {
    pane = await tmux.cli(['chat', h.harness.url, '--resume'], 'Resume a conversation');
    await pane.keys('Escape');
    const screen = await pane.waitFor((s) => s.includes('Connected to') && atPrompt(s));
    assert.doesNotMatch(screen, /resumed task|Resume a conversation/);
  });

  it('--resume without a terminal prints the list (id, state, title) and exits 2, saying to give an id with --task', async () => {
    const result = await runCliWithInput(['chat', h.harness.url, '--resume'], '');
    assert.equal(result.code, 2, result.stderr);
    assert.deepEqual(result.stdout.trimEnd().split('\n').slice(0, 2), [
      `${ids[2]}  input required  cherries are dark`,
      `${ids[1]}  input required  bananas are yellow`,
    ]);
    assert.match(result.stderr, /--resume chooses on a terminal; .* --task/);
  });

  it('with no conversation yet, --continue and --resume say so and start a new one', async () => {
    const empty = await startTestHarness({ script: { reply: 'hi' } });
    try {
      for (const flag of ['--continue', '--resume']) {
        const result = await runCliWithInput(['chat', empty.harness.url, flag], '');
        assert.equal(result.code, 0, result.stderr);
        const verb = flag === '--continue' ? 'continue' : 'resume';
        assert.ok(result.stdout.includes(`(no conversation to ${verb} yet: this one is new)`), result.stdout);
      }
    } finally {
      await empty.close();
    }
  });

  it('--task, --continue and --resume are one choice: two of them are bad usage', async () => {
    const result = await runCli(['chat', h.harness.url, '--task', ids[0]!, '--resume']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /give one of --task, --resume/);
  });
});

describe('how long ago a conversation changed, as --resume shows it', () => {
  it('in the largest whole unit', () => {
    const now = Date.parse('2026-12-06T12:00:00Z');
    assert.equal(ago('2026-12-06T11:59:30Z', now), 'just now');
    assert.equal(ago('2026-12-06T11:55:00Z', now), '5 min ago');
    assert.equal(ago('2026-12-06T09:00:00Z', now), '3 h ago');
    assert.equal(ago('2026-12-05T09:00:00Z', now), 'yesterday');
    assert.equal(ago('2026-12-01T12:00:00Z', now), '5 days ago');
    assert.equal(ago(undefined, now), 'when unknown');
  });
});
