/**
 * The chat page in Chromium across turns and conversations, with a model that holds its reply
 * half-way: the Stop button (CMD-32), which sends `/stop` and keeps the partial reply; a message
 * typed while a turn runs, queued; a reload that goes on where it was; the task's model in the
 * header; the list of recent conversations, titled by their first messages.
 */
import { after, before, describe, it } from 'node:test';
import { WAIT_MS } from '../support/wait.js';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';
import { needs } from '../needs.js';
import { CHROMIUM, openChatPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

const never = new Promise<void>(() => {});

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];

describe('the chat page across turns and conversations', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({
      script: {
        reply: 'first second third fourth',
        hold: (body) => (lastMessage(body).content.includes('hold on') ? { afterChunks: 2, until: never } : undefined),
      },
    });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    ({ page, problems } = browser);
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('CMD-32: hidden while idle; shown while a turn runs; pressing it stops the turn, keeping its partial reply', async () => {
    assert.equal(await page.locator('#stop').isVisible(), false, 'no turn, no Stop');
    await page.locator('#input').pressSequentially('please hold on', { delay: 5 });
    await page.keyboard.press('Enter');
    await page.locator('#stop').waitFor({ state: 'visible', timeout: WAIT_MS });
    await page.waitForFunction(
      () => (document.querySelector('.msg.agent')?.textContent ?? '').includes('second'),
      undefined,
      { timeout: WAIT_MS },
    );
    await page.locator('#stop').click();
    await page.locator('.msg.command[data-command="stop"]').waitFor({ timeout: WAIT_MS });
    await page.locator('.msg.agent:not(.streaming)', { hasText: 'stopped by the user' }).waitFor({ timeout: WAIT_MS });
    assert.match(
      (await page.locator('.msg.agent').first().innerText()).trim(),
      /^first second\s+\[stopped by the user\]$/,
    );
    await page.locator('#stop').waitFor({ state: 'hidden', timeout: WAIT_MS });
    assert.equal(h!.model.aborted, 1, 'the model request was aborted');
  });

  it('an unknown /command is asked about first, the text kept; Enter again sends it to the model', async () => {
    const before = h!.chatRequests().length;
    await page.locator('#input').pressSequentially('/modle x', { delay: 5 });
    await page.keyboard.press('Escape');
    await page.keyboard.press('Enter');
    await page
      .locator('#error', { hasText: '/modle is not a command (did you mean /model?). Press Enter again' })
      .waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('#input').inputValue(), '/modle x', 'nothing typed is lost');
    assert.equal(h!.chatRequests().length, before, 'nothing was sent');
    await page.keyboard.press('Enter');
    await page.locator('.msg.user', { hasText: '/modle x' }).waitFor({ timeout: WAIT_MS });
    await page.waitForFunction((n) => document.querySelectorAll('.msg.agent:not(.streaming)').length >= n, 2, {
      timeout: WAIT_MS,
    });
    assert.match(JSON.stringify(h!.chatRequests().at(-1).messages), /\/modle x/, 'sent as an ordinary message (CMD-3)');
  });

  it('a reload keeps the conversation, and follows a turn still running (its Stop button too)', async () => {
    await page.locator('#input').pressSequentially('please hold on again', { delay: 5 });
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () =>
        Array.from(document.querySelectorAll('.msg.agent')).some(
          (el) => el.classList.contains('streaming') && (el.textContent ?? '').includes('second'),
        ),
      undefined,
      { timeout: WAIT_MS },
    );
    const taskBefore = await page.locator('#task-info').getAttribute('title');
    await page.reload();
    await page.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    assert.equal(await page.locator('#task-info').getAttribute('title'), taskBefore, 'the same task');
    await page.locator('.msg.user', { hasText: 'please hold on again' }).waitFor({ timeout: WAIT_MS });
    await page.locator('.msg.agent', { hasText: 'stopped by the user' }).first().waitFor({ timeout: WAIT_MS });
    await page.locator('#stop').waitFor({ state: 'visible', timeout: WAIT_MS });
    await page.locator('#stop').click();
    await page.locator('#stop').waitFor({ state: 'hidden', timeout: WAIT_MS });
    await page.waitForFunction(() => document.querySelectorAll('.msg.agent:not(.streaming)').length >= 2, undefined, {
      timeout: WAIT_MS,
    });
  });

  it('a message typed while a turn runs is shown as queued, kept through Stop, and sent once the turn has ended', async () => {
    await page.locator('#input').pressSequentially('please hold on once more', { delay: 5 });
    await page.keyboard.press('Enter');
    await page.locator('#stop').waitFor({ state: 'visible', timeout: WAIT_MS });
    await page.locator('#input').pressSequentially('and then this', { delay: 5 });
    await page.keyboard.press('Enter');
    await page.locator('.msg.user.queued', { hasText: 'and then this' }).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('#input').inputValue(), '', 'the input is free for more');
    assert.equal(await page.locator('#error').isVisible(), false, 'no error');
    const requests = h!.chatRequests().length;
    await page.locator('#stop').click();
    await page.locator('.msg.user:not(.queued)', { hasText: 'and then this' }).waitFor({ timeout: WAIT_MS });
    await page.waitForFunction(
      () =>
        document.querySelector('.msg.agent:last-of-type:not(.streaming)') !== null &&
        !document.body.dataset['streaming'],
      undefined,
      { timeout: WAIT_MS },
    );
    assert.equal(h!.chatRequests().length, requests + 1);
    assert.equal(lastMessage(h!.chatRequests().at(-1)).content, 'and then this');
  });

  it("the header shows the task's model, from its replies and from /model", async () => {
    await page.waitForFunction(
      () => document.getElementById('task-info')?.dataset['model'] === 'fixture:small',
      undefined,
      { timeout: WAIT_MS },
    );
    assert.match((await page.locator('#task-info').textContent()) ?? '', /fixture:small/);
    await page.locator('#input').pressSequentially('/model fixture:large', { delay: 5 });
    await page.keyboard.press('Escape');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => document.getElementById('task-info')?.dataset['model'] === 'fixture:large',
      undefined,
      { timeout: WAIT_MS },
    );
  });

  it('Recent lists your conversations; one of them opens in place of this one', async () => {
    const earlier = (await page.locator('#task-info').getAttribute('title'))!;
    await page.locator('#new-chat').click();
    await page.locator('#input').pressSequentially('a fresh start', { delay: 5 });
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.body.dataset['streaming'], undefined, { timeout: WAIT_MS });
    const fresh = (await page.locator('#task-info').getAttribute('title'))!;
    assert.notEqual(fresh, earlier);

    await page.locator('#recent').click();
    await page.locator(`#recent-list button[data-task-id="${earlier}"]`).waitFor({ timeout: WAIT_MS });
    assert.equal(
      await page.locator(`#recent-list button[data-task-id="${fresh}"]`).getAttribute('aria-current'),
      'true',
      'this conversation is marked',
    );
    assert.equal(
      await page.locator(`#recent-list button[data-task-id="${fresh}"] .recent-text`).textContent(),
      'a fresh start',
    );
    assert.equal(
      await page.locator(`#recent-list button[data-task-id="${earlier}"] .recent-text`).textContent(),
      'please hold on',
      'titled by its first message, not its newest',
    );
    await page.locator(`#recent-list button[data-task-id="${earlier}"]`).click();
    await page.locator('.msg.user', { hasText: 'and then this' }).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('#recent-list').isVisible(), false, 'the list closes');
    assert.equal(await page.locator('#task-info').getAttribute('title'), earlier);
    assert.equal(
      await page.locator('.msg.user', { hasText: 'a fresh start' }).count(),
      0,
      'the other conversation is gone from view',
    );
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
