/**
 * Sub-tasks on the chat page in Chromium: the note with a sub-task's result, which the harness
 * writes on the parent task outside any turn, appears while the page is idle, without a reload;
 * an opened sub-task shows its result rendered as Markdown, as replies are.
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

let release: () => void = () => {};
const released = new Promise<void>((resolve) => (release = resolve));
let releaseSecond: () => void = () => {};
const second = new Promise<void>((resolve) => (releaseSecond = resolve));

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];

describe('sub-tasks on the chat page', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({
      script: {
        reply: 'The result is **bold** and `coded`.',
        hold: (body) => {
          const asked = lastMessage(body).content;
          if (asked.includes('second slow job')) return { afterChunks: 1, until: second };
          return asked.includes('slow job') ? { afterChunks: 1, until: released } : undefined;
        },
      },
    });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    ({ page, problems } = browser);
  });

  after(async () => {
    release();
    releaseSecond();
    await browser?.close();
    await h?.close();
  });

  it("a sub-task's note appears on the idle page as the sub-task ends, without a reload", async () => {
    await page.evaluate(() => ((window as unknown as { loadedOnce: boolean }).loadedOnce = true));
    await page.locator('#input').pressSequentially('/spawn a slow job', { delay: 5 });
    await page.keyboard.press('Escape');
    await page.keyboard.press('Enter');
    await page.locator('.msg.command[data-command="spawn"] .task-ref').waitFor({ timeout: WAIT_MS });
    // The command's own stream has ended: the page is idle while the sub-task's model still writes.
    await page.waitForFunction(() => !document.body.dataset['streaming'], undefined, { timeout: WAIT_MS });
    assert.equal(await page.locator('.msg.note').count(), 0, 'no note before the sub-task ends');
    release();
    const note = page.locator('.msg.note', { hasText: 'completed' });
    await note.waitFor({ timeout: WAIT_MS });
    assert.match(
      (await note.textContent()) ?? '',
      /The result is \*\*bold\*\*/,
      "the note carries the sub-task's result",
    );
    assert.equal(
      await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce),
      true,
      'the same page, never reloaded',
    );
    assert.equal(await page.locator('.msg.note', { hasText: 'completed' }).count(), 1, 'shown once');
  });

  it("an opened sub-task's result is rendered Markdown, as a reply is", async () => {
    const link = page.locator('.msg.command[data-command="spawn"] .task-ref');
    await link.locator('.task-ref-link').click();
    const detail = link.locator('.task-ref-detail');
    await detail.locator('strong').waitFor({ timeout: WAIT_MS });
    assert.equal(await detail.locator('strong').textContent(), 'bold');
    assert.equal(await detail.locator('code').textContent(), 'coded');
    assert.doesNotMatch((await detail.innerText()) ?? '', /\*\*|`/, 'no Markdown markers left');
  });

  it("issue 33: a second /spawn on the idle task: its note appears live too; the page subscribes a few times, not again and again over the command's reply", async () => {
    const subscriptions: string[] = [];
    const count = (request: { postData(): string | null }) => {
      if ((request.postData() ?? '').includes('SubscribeToTask')) subscriptions.push(request.postData()!);
    };
    page.on('request', count);
    await page.locator('#input').pressSequentially('/spawn a second slow job', { delay: 5 });
    await page.keyboard.press('Escape');
    await page.keyboard.press('Enter');
    await page.locator('.msg.command[data-command="spawn"]').nth(1).waitFor({ timeout: WAIT_MS });
    await page.waitForFunction(() => !document.body.dataset['streaming'], undefined, { timeout: WAIT_MS });
    releaseSecond();
    await page.locator('.msg.note', { hasText: 'completed' }).nth(1).waitFor({ timeout: WAIT_MS });
    page.off('request', count);
    assert.equal(await page.locator('.msg.note').count(), 2, 'each note once');
    // One replays the /spawn reply (which carries no generation, CMD-4), one reads the task and waits for the note.
    assert.ok(subscriptions.length <= 3, `${subscriptions.length} subscriptions`);
  });

  // Whether a later read waits with currentGeneration depends on how fast the sub-task ends; task-wait.test.ts pins that.
  it("issue 36: a sub-task's link reads its state with A2A 1.1's GetTask (the harness's card lists 1.1)", async () => {
    const waits: string[] = [];
    const note = (request: { headers(): Record<string, string>; postData(): string | null }) => {
      const body = request.postData() ?? '';
      if (request.headers()['a2a-version'] === '1.1') waits.push(body);
    };
    page.on('request', note);
    await page.locator('#input').pressSequentially('/spawn a third job', { delay: 5 });
    await page.keyboard.press('Escape');
    await page.keyboard.press('Enter');
    const link = page.locator('.msg.command[data-command="spawn"] .task-ref').nth(2);
    await link.waitFor({ timeout: WAIT_MS });
    await page
      .locator('.msg.command[data-command="spawn"] .task-ref[data-state="completed"]')
      .nth(2)
      .waitFor({ timeout: WAIT_MS });
    page.off('request', note);
    const id = await link.getAttribute('data-task-id');
    assert.ok(
      waits.some((body) => body.includes(`"id":"${id}"`) && body.includes('"method":"GetTask"')),
      `a 1.1 wait for ${id}`,
    );
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
