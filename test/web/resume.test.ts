/**
 * Issue 24: the chat page reloaded in the middle of a turn shows the whole reply so far (read
 * with GetTask), then follows the rest (SubscribeToTask with `Last-Event-ID` = the task's
 * generation): every word once, none lost. Chromium as in page.test.ts, with a model that holds
 * its reply half-way until the test lets it go.
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

const WORDS = Array.from({ length: 30 }, (_, i) => `w${i}`);

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];
let release: () => void = () => {};

const wordsOf = (text: string): string[] => text.match(/\bw\d+\b/g) ?? [];

describe('the chat page resumes a turn after a reload', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({
      script: {
        reply: WORDS.join(' '),
        chunkDelayMs: 40,
        hold: (body) =>
          lastMessage(body).content.includes('hold')
            ? { afterChunks: 3, until: new Promise<void>((resolve) => (release = resolve)) }
            : undefined,
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

  it('issue 24: a reload mid-turn shows the whole reply so far, then the rest, each word once', async () => {
    await page.locator('#input').pressSequentially('first, a short one', { delay: 5 });
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.body.dataset['streaming'], undefined, { timeout: WAIT_MS });
    await page.locator('#input').pressSequentially('please hold on', { delay: 5 });
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () =>
        Array.from(document.querySelectorAll('.msg.agent.streaming')).some((el) => /\bw2\b/.test(el.textContent ?? '')),
      undefined,
      { timeout: WAIT_MS },
    );
    await page.reload();
    await page.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    // Before anything more is written: the reply so far, from the task itself.
    const soFar = await page.locator('.msg.agent').last().innerText();
    assert.deepEqual(wordsOf(soFar), WORDS.slice(0, wordsOf(soFar).length));
    assert.ok(wordsOf(soFar).includes('w2'), `the reply so far shows: ${soFar}`);
    release();
    // While the rest streams in: no word repeated, none missing.
    const streaming = await page.waitForFunction(
      () => {
        const el = document.querySelectorAll('.msg.agent')[document.querySelectorAll('.msg.agent').length - 1];
        const text = el?.textContent ?? '';
        return el?.classList.contains('streaming') && /\bw1[0-9]\b/.test(text) ? text : undefined;
      },
      undefined,
      { timeout: WAIT_MS, polling: 'raf' },
    );
    const text = (await streaming.jsonValue()) as string;
    assert.deepEqual(wordsOf(text), WORDS.slice(0, wordsOf(text).length), `mid-stream: ${text}`);
    await page.waitForFunction(
      () => {
        const all = document.querySelectorAll('.msg.agent');
        const last = all[all.length - 1];
        return !!last && !last.classList.contains('streaming') && /\bw29\b/.test(last.textContent ?? '');
      },
      undefined,
      { timeout: WAIT_MS },
    );
    const agents = await page.locator('.msg.agent').allInnerTexts();
    assert.deepEqual(wordsOf(agents.at(-1)!), WORDS, `the whole reply, once: ${JSON.stringify(agents)}`);
    assert.equal(
      agents.filter((t) => t.includes('w29')).length,
      2,
      'one bubble per turn: the first turn, and this one',
    );
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
