/**
 * The chat page and the conversation extension's commands, in Chromium: "rewind to here" on a
 * message of yours (the conversation drawn again without what was taken back, the message back
 * in the input), "fork from here" (the new task opened, the message in its input), and a
 * compaction point drawn collapsed, opening on its summary.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestHarness, textOf, type TestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';
import { needs } from '../needs.js';
import { poll, WAIT_MS } from '../support/wait.js';
import { CHROMIUM, openChatPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;

/** Sends `text` from the input and waits for its reply. */
async function say(text: string): Promise<void> {
  await page.locator('#input').fill(text);
  await page.keyboard.press('Enter');
  await page.locator('.msg.agent:not(.streaming)', { hasText: `re: ${text}` }).waitFor({ timeout: WAIT_MS });
}

const userBubble = (text: string) => page.locator('.msg.user', { hasText: text });

/** The texts of a task's messages, as `GetTask` has them. */
async function textsOf(taskId: string): Promise<string[]> {
  const task = await (await h!.client('JSONRPC')).getTask({ tenant: '', id: taskId, historyLength: undefined });
  return task.history.map((m) => textOf(m));
}

describe('the chat page: rewind, fork and compaction (CMD-37)', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({ script: { reply: (body) => `re: ${lastMessage(body).content}` } });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    page = browser.page;
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('rewind to here: the conversation is drawn again without the messages taken back, and the message is back in the input', async () => {
    for (const text of ['first question', 'second question', 'third question']) await say(text);
    await userBubble('second question').hover();
    await userBubble('second question').locator('.rewind-here').click();
    await page.locator('.rewind-mark').waitFor({ timeout: WAIT_MS });
    await page.waitForFunction(
      () => (document.getElementById('input') as HTMLTextAreaElement).value !== '',
      undefined,
      {
        timeout: WAIT_MS,
      },
    );
    assert.equal(await page.locator('#input').inputValue(), 'second question');
    assert.equal(await userBubble('third question').count(), 0, 'taken back');
    assert.equal(await userBubble('second question').count(), 0, 'taken back with what followed it');
    assert.equal(await page.locator('.msg.agent', { hasText: 're: third question' }).count(), 0);
    assert.equal(await userBubble('first question').count(), 1, 'what came before stays');
    assert.equal(await page.locator('.msg.command[data-command="rewind"]').count(), 1, "the command's reply");
    assert.equal(await page.locator('.rewind-mark').innerText(), 'rewound');
    const requests = h!.chatRequests().length;
    await page.keyboard.press('Enter');
    await poll('the message sent again', () => h!.chatRequests().length > requests);
    const sent = JSON.stringify(h!.chatRequests().at(-1).messages);
    assert.match(sent, /second question/);
    assert.doesNotMatch(sent, /third question/, 'the model is not sent what was taken back');
  });

  it('fork from here: the new task is opened, the message in its input', async () => {
    await page.locator('#new-chat').click();
    for (const text of ['alpha', 'beta']) await say(text);
    const before = await page.locator('#task-info').getAttribute('title');
    await userBubble('beta').hover();
    await userBubble('beta').locator('.fork-here').click();
    await page.waitForFunction(
      (was) => {
        const now = document.getElementById('task-info')?.title;
        return !!now && now !== was && document.body.dataset['ready'] === 'true';
      },
      before,
      { timeout: WAIT_MS },
    );
    const opened = (await page.locator('#task-info').getAttribute('title'))!;
    assert.deepEqual(await textsOf(opened), ['alpha', 're: alpha'], 'the conversation as it was before that message');
    await userBubble('alpha').waitFor({ timeout: WAIT_MS });
    assert.equal(await userBubble('beta').count(), 0, 'drawn as the new task has it');
    await page.waitForFunction(
      () => (document.getElementById('input') as HTMLTextAreaElement).value === 'beta',
      undefined,
      {
        timeout: WAIT_MS,
      },
    );
    const commands = JSON.stringify(h!.model.requests.map((r) => r.body));
    assert.doesNotMatch(commands, /\/fork/, 'the command never reached the model');
  });

  it('a /fork typed shows a button that opens its task, not a sub-task link', async () => {
    await page.locator('#new-chat').click();
    await say('gamma');
    const before = await page.locator('#task-info').getAttribute('title');
    await page.locator('#input').fill('/fork');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Enter');
    const reply = page.locator('.msg.command[data-command="fork"]');
    await reply.locator('.open-fork').waitFor({ timeout: WAIT_MS });
    assert.equal(await reply.locator('.task-ref').count(), 0, 'a fork is not a sub-task');
    await reply.locator('.open-fork').click();
    await page.waitForFunction((was) => document.getElementById('task-info')?.title !== was, before, {
      timeout: WAIT_MS,
    });
    const opened = (await page.locator('#task-info').getAttribute('title'))!;
    assert.deepEqual(await textsOf(opened), ['gamma', 're: gamma'], 'the whole conversation, copied');
  });

  it('a compaction point is drawn collapsed, with its sizes; opened, it shows the summary', async () => {
    await page.locator('#new-chat').click();
    for (const text of ['one', 'two']) await say(text);
    await page.locator('#input').fill('/compact');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Enter');
    const block = page.locator('details.compaction');
    await block.waitFor({ timeout: WAIT_MS });
    assert.match(await block.locator('summary').innerText(), /^Conversation compacted \([\d,]+ → [\d,]+ characters\)$/);
    assert.equal(await block.evaluate((el) => (el as HTMLDetailsElement).open), false, 'collapsed');
    assert.equal(await block.locator('.compaction-summary').isVisible(), false);
    await block.locator('summary').click();
    await block.locator('.compaction-summary').waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.notEqual((await block.locator('.compaction-summary').innerText()).trim(), '');
    assert.deepEqual(browser!.problems, []);
  });
});
