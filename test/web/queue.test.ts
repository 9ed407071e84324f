/**
 * The chat page and the task's queue on the agent (spec/while-busy-extension-v1.md): a message
 * typed while a turn runs is sent at once with `tiny-harness/while-busy: "enqueue"`, shown as
 * queued until its own turn starts, and its reply drawn under it; a reload keeps it queued and
 * takes up its stream again; queued messages run in the order typed. The fixture model holds a
 * reply whose prompt says "hold" until the test lets it go.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';
import { needs } from '../needs.js';
import { WAIT_MS } from '../support/wait.js';
import { CHROMIUM, openChatPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];
/** Lets go of the replies held so far; each test holds its own. */
let release: () => void = () => {};
let held = new Promise<void>((resolve) => (release = resolve));

function holdAgain(): void {
  held = new Promise<void>((resolve) => (release = resolve));
}

/** The transcript's entries, top to bottom: the kind of each (user, queued, agent) and its text. */
function transcript(): Promise<string[]> {
  return page.$$eval('#log > .msg', (els) =>
    els.map((el) => {
      const kind = el.classList.contains('queued') ? 'queued' : el.classList.contains('user') ? 'user' : 'agent';
      return `${kind}: ${(el.textContent ?? '').trim()}`;
    }),
  );
}

async function type(text: string): Promise<void> {
  await page.locator('#input').pressSequentially(text, { delay: 5 });
  await page.keyboard.press('Enter');
}

/** Waits until every stream has ended and the last reply is whole. */
async function idle(): Promise<void> {
  await page.waitForFunction(
    () => !document.body.dataset['streaming'] && document.querySelector('.msg.agent.streaming') === null,
    undefined,
    { timeout: WAIT_MS },
  );
}

/** Waits until the held turn's reply has begun: the turn surely runs. */
async function holding(): Promise<void> {
  await page.locator('.msg.agent.streaming', { hasText: 're: please' }).waitFor({ timeout: WAIT_MS });
}

describe("the chat page and the task's queue", needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({
      script: {
        reply: (body) => `re: ${lastMessage(body).content} alpha beta gamma`,
        hold: (body) => (lastMessage(body).content.includes('hold') ? { afterChunks: 2, until: held } : undefined),
      },
    });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    ({ page, problems } = browser);
  });

  after(async () => {
    release();
    await browser?.close();
    await h?.close();
  });

  it('while-busy: a message typed during a turn is queued on the agent, shown queued, then runs after the turn with its reply under it', async () => {
    await type('first, no waiting');
    await idle();
    await type('please hold one');
    await holding();
    await type('the queued one');
    await page.locator('.msg.user.queued', { hasText: 'the queued one' }).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('#input').inputValue(), '', 'the input is free for more');
    // On the agent, not in the page: its answer is the Task marked with the message's place in the queue.
    await page
      .locator('.msg.user.queued[title="Queued: 1st in line"]', { hasText: 'the queued one' })
      .waitFor({ timeout: WAIT_MS });
    assert.equal(h!.chatRequests().length, 2, 'its turn has not started');

    release();
    holdAgain();
    await page.locator('.msg.agent', { hasText: 're: the queued one alpha beta gamma' }).waitFor({ timeout: WAIT_MS });
    await idle();
    assert.deepEqual((await transcript()).slice(-4), [
      'user: please hold one',
      'agent: re: please hold one alpha beta gamma',
      'user: the queued one',
      'agent: re: the queued one alpha beta gamma',
    ]);
    assert.equal(lastMessage(h!.chatRequests().at(-1)).content, 'the queued one');
  });

  it('while-busy: a reload while a message is queued shows it queued again, and its reply arrives', async () => {
    await type('please hold two');
    await holding();
    await type('queued across a reload');
    await page.locator('.msg.user.queued', { hasText: 'queued across a reload' }).waitFor({ timeout: WAIT_MS });
    const requests = h!.chatRequests().length;

    await page.reload();
    await page.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    await page.locator('.msg.user.queued', { hasText: 'queued across a reload' }).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('.msg.user', { hasText: 'queued across a reload' }).count(), 1, 'shown once');

    release();
    holdAgain();
    await page
      .locator('.msg.agent', { hasText: 're: queued across a reload alpha beta gamma' })
      .waitFor({ timeout: WAIT_MS });
    await idle();
    assert.equal(h!.chatRequests().length, requests + 1, 'it ran once');
    assert.deepEqual((await transcript()).slice(-2), [
      'user: queued across a reload',
      'agent: re: queued across a reload alpha beta gamma',
    ]);
    assert.equal(await page.locator('.msg.user.queued').count(), 0);

    // Its turn has run: a reload now finds it in the task's history and sends nothing again.
    await page.reload();
    await page.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    await page.locator('.msg.user', { hasText: 'queued across a reload' }).waitFor({ timeout: WAIT_MS });
    await idle();
    assert.equal(await page.locator('.msg.user.queued').count(), 0);
    assert.equal(h!.chatRequests().length, requests + 1, 'not sent again');
  });

  it('while-busy: two queued messages run in the order typed, each reply under its message', async () => {
    await type('please hold three');
    await holding();
    await type('queued A');
    await type('queued B');
    await page
      .locator('.msg.user.queued[title="Queued: 2nd in line"]', { hasText: 'queued B' })
      .waitFor({ timeout: WAIT_MS });
    assert.deepEqual((await transcript()).slice(-2), ['queued: queued A', 'queued: queued B']);

    release();
    holdAgain();
    await page.locator('.msg.agent', { hasText: 're: queued B alpha beta gamma' }).waitFor({ timeout: WAIT_MS });
    await idle();
    assert.deepEqual(
      h!
        .chatRequests()
        .slice(-2)
        .map((r) => lastMessage(r).content),
      ['queued A', 'queued B'],
    );
    assert.deepEqual((await transcript()).slice(-6), [
      'user: please hold three',
      'agent: re: please hold three alpha beta gamma',
      'user: queued A',
      'agent: re: queued A alpha beta gamma',
      'user: queued B',
      'agent: re: queued B alpha beta gamma',
    ]);
  });

  it('while-busy: six queued messages hold at most two connections: Stop still answers, and all six run in order', async () => {
    await type('please hold four');
    await holding();
    const texts = ['one', 'two', 'three', 'four', 'five', 'six'].map((n) => `queued ${n}`);
    for (const text of texts) await type(text);
    await page.waitForFunction((n) => document.querySelectorAll('.msg.user.queued').length === n, texts.length, {
      timeout: WAIT_MS,
    });
    // A browser opens six connections to one host: a stream per queued message would leave none for /stop.
    await page.locator('#stop').click();
    await page.locator('.msg.command[data-command="stop"]').last().waitFor({ timeout: WAIT_MS });
    await page.locator('.msg.agent', { hasText: 're: queued six alpha beta gamma' }).waitFor({ timeout: WAIT_MS });
    await idle();
    assert.deepEqual(
      h!
        .chatRequests()
        .slice(-texts.length)
        .map((r) => lastMessage(r).content),
      texts,
    );
    const shown = (await transcript()).filter((line) => line.startsWith('user: queued'));
    assert.deepEqual(
      shown.slice(-texts.length),
      texts.map((t) => `user: ${t}`),
    );
    assert.equal(await page.locator('.msg.user.queued').count(), 0);
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
