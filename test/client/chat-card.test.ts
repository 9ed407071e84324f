/**
 * A chat that is open when the agent gains a command (a command file added to the folder it
 * serves) finds it: the card is read again before a `/name` is called unknown, and when a `/`
 * is typed and the card was read more than a few seconds before.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandsEntry, startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { poll } from '../support/wait.js';
import { PROMPT, TMUX, Tmux, atPrompt, lines, type ChatPane } from './support.js';
import { fakeChat, type FakeChat } from './fake-terminal.js';

const ANSWER = 'reviewed';

describe('tiny-harness chat and a card that changes', needs(TMUX), () => {
  let h: TestHarness;
  let dir: string;
  const tmux = new Tmux();
  let pane: ChatPane | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tiny-harness-chat-card-'));
    h = await startTestHarness({ harness: { commandsDir: dir }, script: { reply: () => ANSWER } });
  });

  after(async () => {
    await pane?.kill();
    await tmux.close();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a command file added after the chat started is found: run, not called unknown, and offered from then on', async () => {
    pane = await tmux.chat(h.harness.url);
    writeFileSync(join(dir, 'review.md'), '---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully.\n');
    await poll('the served card to list /review', async () => {
      const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
      return commandsEntry(card).params.commands.some((c: { name: string }) => c.name === 'review');
    });
    await pane.type('/review src/wire.ts');
    await pane.keys('Enter');
    const screen = await pane.waitFor((s) => s.includes(ANSWER) && atPrompt(s));
    assert.doesNotMatch(screen, /not a command|Send it to the model anyway/);
    assert.match(JSON.stringify(h.chatRequests().at(-1).messages), /Review src\/wire.ts carefully/);

    await pane.type('/rev');
    await pane.waitFor((s) => s.includes('/review — Review a file') && lines(s).includes(`${PROMPT} /rev`));
  });
});

describe('tiny-harness chat reads the card again as a command is typed', () => {
  let h: TestHarness;
  let dir: string;
  let chat: FakeChat | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tiny-harness-chat-card-'));
    h = await startTestHarness({ harness: { commandsDir: dir }, script: { reply: () => ANSWER } });
  });

  after(async () => {
    await chat?.close();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('typing / with a card read more than a few seconds ago reads it again: a command file added meanwhile is in the menu at once', async () => {
    chat = await fakeChat(h.harness.url);
    const { terminal } = chat;
    writeFileSync(join(dir, 'tidy.md'), '---\ndescription: Tidy a file\n---\nTidy $ARGUMENTS.\n');
    await poll('the served card to list /tidy', async () => {
      const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
      return commandsEntry(card).params.commands.some((c: { name: string }) => c.name === 'tidy');
    });
    terminal.time = 10_000; // the card the chat read at its start is ten seconds old
    terminal.press('/ti');
    // No more keys: the menu is drawn again once the card has been read.
    await terminal.waitFor('/tidy in the menu', (s) => s.includes('/tidy — Tidy a file'));
  });
});
