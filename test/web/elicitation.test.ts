/**
 * A tool call's question on the chat page in Chromium (issue 39, TOOL-5): the fixture MCP
 * server's form is drawn from its JSON Schema (a text box, a number box, a checkbox, a list);
 * Answer sends the wire's answer as a data part, and the turn resumes with it.
 */
import { after, before, describe, it } from 'node:test';
import { WAIT_MS } from '../support/wait.js';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { reply, toolCalls } from '../e2e/elicitation-support.js';
import { needs } from '../needs.js';
import { CHROMIUM, openChatPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];

async function say(text: string): Promise<void> {
  await page.locator('#input').pressSequentially(text, { delay: 5 });
  await page.keyboard.press('Enter');
}

describe('a tool call that asks, on the chat page (issue 39)', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({
      script: { toolCalls, reply },
      config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd() } } },
    });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    ({ page, problems } = browser);
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('issue 39 / TOOL-5: a form drawn from the schema answers the question; the call gets the answer and the turn resumes', async () => {
    await say('please ask on fx');
    const form = page.locator('form.question-form');
    await form.waitFor({ timeout: WAIT_MS });
    await page.locator('.msg.question', { hasText: 'fx asks: Who are you?' }).waitFor({ timeout: WAIT_MS });
    await form.locator('input[name="name"]').fill('Ada');
    await form.locator('input[name="age"]').fill('36');
    await form.locator('input[name="admin"]').check();
    await form.locator('select[name="color"]').selectOption('green');
    await form.getByRole('button', { name: 'Answer' }).click();
    await page
      .locator('.msg.agent', {
        hasText: 'tool said: answered accept {"name":"Ada","age":36,"admin":true,"color":"green"}',
      })
      .waitFor({ timeout: WAIT_MS });
    assert.deepEqual(problems, [], 'no console error on the page');
  });

  it('issue 39: Decline declines it', async () => {
    await say('please ask on fx');
    const form = page.locator('form.question-form:not(:has(button[disabled]))');
    await form.waitFor({ timeout: WAIT_MS });
    await form.getByRole('button', { name: 'Decline' }).click();
    await page.locator('.msg.agent', { hasText: 'tool said: answered decline {}' }).waitFor({ timeout: WAIT_MS });
  });
});
