/**
 * The chat page in a real browser: Debian's Chromium (`chromium` on PATH, or the program
 * TINY_HARNESS_CHROMIUM names) driven by playwright-core, against the harness started
 * in-process with a fixture model that streams its reply a word at a time. Completion of /mo,
 * a command reply, a streamed answer, a sub-task link, and a phone-width screen. Every wait is
 * bounded.
 *
 * Set TINY_HARNESS_SCREENSHOTS=<folder> to save a desktop and a phone screenshot there.
 */
import { after, before, describe, it } from 'node:test';
import { WAIT_MS } from '../support/wait.js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { COMMANDS_EXTENSION_URI } from '../../src/commands/index.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { CHROMIUM, loadPage, openBrowserPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

const ANSWER = 'Streaming works one word at a time over server sent events, as promised.';
const SCREENSHOTS = process.env['TINY_HARNESS_SCREENSHOTS'];

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];
const rpcHeaders: Array<Promise<Record<string, string>>> = [];

const input = () => page.locator('#input');
const options = () => page.locator('#completions [role="option"]');

async function type(text: string): Promise<void> {
  await input().pressSequentially(text, { delay: 10 });
}

async function noHorizontalOverflow(width: number): Promise<void> {
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scrollWidth <= width, `the page is ${scrollWidth} px wide on a ${width} px screen`);
}

async function within(selector: string, width: number): Promise<void> {
  const box = await page.locator(selector).boundingBox();
  assert.ok(box, `${selector} is shown`);
  assert.ok(
    box.x >= 0 && box.x + box.width <= width + 0.5,
    `${selector} spans ${box.x}..${box.x + box.width}, outside 0..${width}`,
  );
}

describe('the chat page in Chromium', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({ script: { reply: ANSWER, chunkDelayMs: 60 } });
    browser = await openBrowserPage({ waitMs: WAIT_MS, viewport: { width: 1200, height: 800 } });
    ({ page, problems } = browser);
    page.on('request', (request) => {
      if (!request.url().endsWith('/a2a/jsonrpc')) return;
      const headers = request.allHeaders();
      // A request still open when the browser closes (a subscription) never has its headers read.
      headers.catch(() => undefined);
      rpcHeaders.push(headers);
    });
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('loads from / with the card read', async () => {
    assert.equal(await loadPage(page, `${h!.harness.url}/`, WAIT_MS), 200);
    assert.equal(await page.locator('#agent-name').textContent(), 'tiny-harness');
    assert.equal(await input().isEnabled(), true);
  });

  it('typing /mo offers model with its argument hint and description', async () => {
    await input().click();
    await type('/mo');
    await page.locator('#completions').waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.equal(await options().count(), 1);
    const option = options().first();
    assert.equal(await option.locator('.option-name').textContent(), '/model');
    assert.equal(await option.locator('.option-hint').textContent(), '[<model>]');
    assert.match((await option.locator('.option-description').textContent()) ?? '', /model/);
    assert.equal(await option.getAttribute('aria-selected'), 'true');
  });

  it('Tab picks it, and /model is answered as a command reply', async () => {
    await page.keyboard.press('Tab');
    assert.equal(await input().inputValue(), '/model ');
    // The list stays open for the argument: the models the card lists (the command-arguments extension).
    await page.locator('#completions [data-name="fixture:large"]').waitFor({ timeout: WAIT_MS });
    await page.keyboard.press('Enter');
    const reply = page.locator('.msg.command[data-command="model"]');
    await reply.waitFor({ timeout: WAIT_MS });
    assert.equal(await reply.locator('.badge').textContent(), '/model');
    assert.match((await reply.locator('.body').textContent()) ?? '', /\* fixture:small/);
    assert.equal(await page.locator('.msg.agent').count(), 0, 'a command reply is not shown as the model’s');
    assert.equal(await input().inputValue(), '', 'the input is cleared');
    const headers = await Promise.all(rpcHeaders);
    assert.ok(headers.length > 0, 'the page talked JSON-RPC');
    for (const sent of headers)
      assert.equal(sent['a2a-extensions'], COMMANDS_EXTENSION_URI, 'the extension is activated on every call');
  });

  it('a question streams its answer into one bubble, on the same task', async () => {
    const taskBefore = await page.locator('#task-info').getAttribute('title');
    await type('What can you do?');
    await page.keyboard.press('Enter');
    // Seen while it streams: part of the answer, still marked as streaming.
    await page.waitForFunction(
      (answer) => {
        const bubble = document.querySelector('.msg.agent.streaming');
        const text = bubble?.textContent ?? '';
        return text.length > 0 && text.length < answer.length;
      },
      ANSWER,
      { timeout: WAIT_MS, polling: 20 },
    );
    await page.locator('.msg.agent:not(.streaming)').waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('.msg.agent').count(), 1);
    assert.equal((await page.locator('.msg.agent').innerText()).trim(), ANSWER);
    assert.equal(
      await page.locator('#task-info').getAttribute('title'),
      taskBefore,
      'the conversation stays in one task',
    );
    assert.equal(h!.chatRequests().length, 1, 'the model was asked once, and never about /model');
    assert.ok(!JSON.stringify(h!.chatRequests()).includes('/model'));
  });

  it('/spawn shows a sub-task link that follows the sub-task and shows its result', async () => {
    await type('/spawn summarise the weather');
    await page.keyboard.press('Enter');
    const link = page.locator('.msg.command[data-command="spawn"] .task-ref');
    await link.waitFor({ timeout: WAIT_MS });
    assert.match((await link.locator('.task-ref-link').textContent()) ?? '', /^↳ sub-task [0-9a-f]{8}$/);
    await page.waitForSelector('.task-ref[data-state="completed"]', { timeout: WAIT_MS });
    await link.locator('.task-ref-link').click();
    await page.waitForFunction(
      (answer) => document.querySelector('.task-ref-detail')?.textContent?.trim() === answer,
      ANSWER,
      {
        timeout: WAIT_MS,
      },
    );
  });

  it('keyboard: arrows move through the list, Escape closes it, Enter on a full name sends', async () => {
    await type('/');
    await options().first().waitFor({ timeout: WAIT_MS });
    const names = await options().locator('.option-name').allTextContents();
    assert.deepEqual(
      names.slice(0, 6),
      ['/help', '/model', '/status', '/stop', '/spawn', '/compact'],
      'in the card order',
    );
    await page.keyboard.press('ArrowUp');
    assert.equal(await options().last().getAttribute('aria-selected'), 'true', 'up from the first wraps to the last');
    await page.keyboard.press('Escape');
    await page.locator('#completions').waitFor({ state: 'hidden', timeout: WAIT_MS });
    assert.equal(await input().inputValue(), '/');
    await type('status');
    await page.keyboard.press('Enter');
    await page.locator('.msg.command[data-command="status"]').waitFor({ timeout: WAIT_MS });
  });

  it('issue 33: Enter on /model named after its provider sends it at once, and the next message goes to that model', async () => {
    await type('/model large');
    await page.locator('#completions [data-name="fixture:large"]').waitFor({ timeout: WAIT_MS });
    await page.keyboard.press('Enter');
    await page
      .locator('.msg.command[data-command="model"]', { hasText: 'now uses fixture:large' })
      .waitFor({ timeout: WAIT_MS });
    assert.equal(await input().inputValue(), '', 'sent with one Enter');
    const asked = h!.chatRequests().length;
    const replies = await page.locator('.msg.agent').count();
    await type('Which model is this?');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      (n) => document.querySelectorAll('.msg.agent:not(.streaming)').length === n,
      replies + 1,
      { timeout: WAIT_MS },
    );
    assert.equal(h!.chatRequests().length, asked + 1);
    assert.equal(h!.chatRequests().at(-1).model, 'large');
  });

  it('at 375 px wide, the input and the list are usable and nothing overflows sideways', async () => {
    if (SCREENSHOTS) {
      await type('/');
      await options().first().waitFor({ timeout: WAIT_MS });
      await page.screenshot({ path: join(SCREENSHOTS, 'tiny-harness-page-desktop.png') });
      await page.keyboard.press('Escape');
      await input().fill('');
    }
    await page.setViewportSize({ width: 375, height: 720 });
    await noHorizontalOverflow(375);
    await input().click();
    await type('/');
    await options().first().waitFor({ timeout: WAIT_MS });
    await within('#completions', 375);
    await within('#input', 375);
    await within('#send', 375);
    const count = await options().count();
    for (let i = 0; i < count; i++) await within(`#command-option-${i}`, 375);
    await noHorizontalOverflow(375);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'tiny-harness-page-phone.png') });
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    assert.equal(await input().inputValue(), '/model ');
    await type('fixture:large');
    const models = await page.locator('.msg.command[data-command="model"]').count();
    await page.locator('#send').click();
    const switched = page.locator('.msg.command[data-command="model"]').last();
    await page.waitForFunction(
      (n) => document.querySelectorAll('.msg.command[data-command="model"]').length === n,
      models + 1,
      { timeout: WAIT_MS },
    );
    assert.match((await switched.textContent()) ?? '', /fixture:large/);
    await noHorizontalOverflow(375);
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
