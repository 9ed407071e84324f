/**
 * The list of recent conversations on the chat page in Chromium (issue 33): Escape closes it,
 * and conversations with the same title are told apart by their first replies.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { WAIT_MS } from '../support/wait.js';
import { CHROMIUM, openChatPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];
let replies = 0;

/** Starts a conversation with `text` and waits for its reply. */
async function converse(text: string): Promise<void> {
  await page.locator('#new-chat').click();
  await page.locator('#input').pressSequentially(text, { delay: 2 });
  await page.keyboard.press('Enter');
  await page.locator('.msg.agent:not(.streaming)').waitFor({ timeout: WAIT_MS });
  await page.waitForFunction(() => !document.body.dataset['streaming'], undefined, { timeout: WAIT_MS });
}

async function openRecent(): Promise<void> {
  await page.locator('#recent').click();
  await page.locator('#recent-list li').first().waitFor({ timeout: WAIT_MS });
}

describe('the list of recent conversations', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({ script: { reply: () => `Reply number ${++replies}.` } });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    ({ page, problems } = browser);
    await converse('hello there');
    await converse('hello there');
    await converse('something else');
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('issue 33: Escape closes the list, from the input or from within it, and the focus goes back where it was', async () => {
    await openRecent();
    await page.keyboard.press('Escape');
    await page.locator('#recent-list').waitFor({ state: 'hidden', timeout: WAIT_MS });
    assert.equal(await page.locator('#recent').getAttribute('aria-expanded'), 'false');

    await openRecent();
    await page.locator('#recent-list button').first().focus();
    await page.keyboard.press('Escape');
    await page.locator('#recent-list').waitFor({ state: 'hidden', timeout: WAIT_MS });
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'recent', 'back on the button that opened it');

    await openRecent();
    await page.locator('#input').focus();
    await page.locator('#input').pressSequentially('/', { delay: 2 });
    await page.locator('#completions').waitFor({ timeout: WAIT_MS });
    await page.keyboard.press('Escape');
    await page.locator('#completions').waitFor({ state: 'hidden', timeout: WAIT_MS });
    assert.equal(await page.locator('#recent-list').isVisible(), true, 'the first Escape closes the command list');
    await page.keyboard.press('Escape');
    await page.locator('#recent-list').waitFor({ state: 'hidden', timeout: WAIT_MS });
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'input', 'typing goes on');
    await page.locator('#input').fill('');
  });

  it('issue 33: conversations with the same title are told apart by their first replies; a title of its own shows none', async () => {
    const shown = async () => {
      await openRecent();
      const rows = await page.$$eval('#recent-list button', (buttons) =>
        buttons.map((b) => [
          b.querySelector('.recent-text')?.textContent,
          b.querySelector('.recent-reply')?.textContent,
        ]),
      );
      await page.keyboard.press('Escape');
      return rows;
    };
    const expected = [
      ['something else', undefined],
      ['hello there', 'Reply number 2.'],
      ['hello there', 'Reply number 1.'],
    ];
    assert.deepEqual(await shown(), expected);
    // Titles kept by an earlier page, without replies: the replies are read once more.
    await page.evaluate(() => {
      const kept = JSON.parse(localStorage.getItem('tiny-harness/titles') ?? '{}') as Record<string, { title: string }>;
      const titlesOnly = Object.fromEntries(Object.entries(kept).map(([id, known]) => [id, known.title]));
      localStorage.setItem('tiny-harness/titles', JSON.stringify(titlesOnly));
    });
    assert.deepEqual(await shown(), expected);
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
