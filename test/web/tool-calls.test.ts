/**
 * Tool calls on the chat page in Chromium (TOOL-1, CMD-33, TOOL-5): each call a collapsible row
 * that updates in place, and a call waiting for approval with the chat's three answers as
 * buttons, Yes, Always for this conversation and No (with a reason), that send `/approve <id>`,
 * `/approve always <id>` and `/deny <id> <reason>`. The fixture MCP server over stdio, `echo`
 * needing approval.
 */
import { after, before, describe, it } from 'node:test';
import { WAIT_MS } from '../support/wait.js';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { lastMessage } from '../fixtures/model-server.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
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

describe('tool calls on the chat page', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({
      script: {
        toolCalls: (body) => {
          const last = lastMessage(body);
          if (last.role !== 'user') return undefined;
          if (last.content.includes('please fail')) return [{ name: 'fx_fail', arguments: {} }];
          if (last.content.includes('please echo')) return [{ name: 'fx_echo', arguments: { text: 'from the page' } }];
          return undefined;
        },
        reply: (body) =>
          lastMessage(body).role === 'tool' ? `done: ${lastMessage(body).content.slice(0, 60)}` : 'plain',
      },
      config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd(), approve: ['echo'] } } },
    });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    ({ page, problems } = browser);
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('TOOL-1: a tool call is one collapsible row, updated in place as it ends; the reply stays text', async () => {
    await say('please fail');
    const row = page.locator('details.tool-call[data-status="failed"]');
    await row.waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('details.tool-call').count(), 1, 'one row for the call, not one per report');
    assert.equal(await row.locator('.tool-name').textContent(), 'fx_fail');
    assert.equal(await row.getAttribute('open'), null, 'closed until opened');
    await row.locator('summary').click();
    assert.equal(await row.locator('.tool-output').textContent(), 'the fixture tool failed on purpose');
    await page.locator('.msg.agent:not(.streaming)').waitFor({ timeout: WAIT_MS });
    assert.match(
      (await page.locator('.msg.agent').last().textContent()) ?? '',
      /^done: the fixture tool failed on purpose/,
    );
  });

  it('CMD-33: a call waiting for approval opens with the three answers; Yes sends /approve <id> and the turn resumes', async () => {
    await say('please echo');
    const row = page.locator('details.tool-call[data-status="awaiting-approval"]');
    await row.waitFor({ timeout: WAIT_MS });
    assert.equal(await row.getAttribute('open'), '', 'a waiting call opens by itself');
    const id = await row.getAttribute('data-call-id');
    await page.locator('.msg.note', { hasText: 'Answer with /approve' }).waitFor({ timeout: WAIT_MS });
    const labels = await row.locator('.tool-actions button').allTextContents();
    assert.deepEqual(labels, ['Yes', 'Always for this conversation', 'No'], 'labelled as the chat offers them');
    await row.getByRole('button', { name: 'Yes' }).click();
    await page.locator('.msg.command[data-command="approve"]').waitFor({ timeout: WAIT_MS });
    await page
      .locator(`details.tool-call[data-call-id="${id}"][data-status="succeeded"]`)
      .waitFor({ timeout: WAIT_MS });
    await page.locator('.msg.agent', { hasText: 'done: echo: from the page' }).waitFor({ timeout: WAIT_MS });
    assert.ok(
      await page.locator('.msg.user', { hasText: `/approve ${id}` }).count(),
      'the button sent /approve with the call id',
    );
  });

  it('CMD-33: once answered, a call shows no answers, live and reopened', async () => {
    const answered = page.locator('details.tool-call[data-status="succeeded"]', { hasText: 'fx_echo' });
    assert.equal(await answered.getByRole('button', { name: 'Yes' }).isVisible(), false, 'live');
    await page.reload();
    await page.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    await answered.waitFor({ timeout: WAIT_MS });
    assert.equal(await answered.getByRole('button', { name: 'Yes' }).isVisible(), false, 'reopened');
    assert.equal(await answered.getByRole('button', { name: 'No' }).isVisible(), false, 'reopened');
  });

  it("issue 33: reopened, the harness's notice that the turn resumes is drawn as its own line, not as a message the user sent", async () => {
    await page.reload();
    await page.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    await page.locator('.msg.agent', { hasText: 'done: echo: from the page' }).waitFor({ timeout: WAIT_MS });
    const resumes = 'The tool calls waiting for approval were answered; the turn resumes.';
    assert.equal(await page.locator('.msg.user', { hasText: resumes }).count(), 0, 'not a bubble of the user');
    assert.equal(await page.locator('.msg.note:not(.error)', { hasText: resumes }).count(), 1);
  });

  it('CMD-33: No (or Enter in the reason box) sends /deny <id> with the reason typed beside it', async () => {
    await say('please echo once more');
    const row = page.locator('details.tool-call[data-status="awaiting-approval"]');
    await row.waitFor({ timeout: WAIT_MS });
    const id = await row.getAttribute('data-call-id');
    await row.getByRole('textbox', { name: 'Reason for no (optional)' }).fill('not this one');
    await row.getByRole('textbox', { name: 'Reason for no (optional)' }).press('Enter');
    await page.locator(`details.tool-call[data-call-id="${id}"][data-status="canceled"]`).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('.msg.user', { hasText: `/deny ${id} not this one` }).count(), 1);
  });

  it('TOOL-5: Always for this conversation sends /approve always <id>; the next call to that tool runs without asking', async () => {
    await say('please echo with always');
    const row = page.locator('details.tool-call[data-status="awaiting-approval"]');
    await row.waitFor({ timeout: WAIT_MS });
    const id = await row.getAttribute('data-call-id');
    await row.getByRole('button', { name: 'Always for this conversation' }).click();
    await page
      .locator(`details.tool-call[data-call-id="${id}"][data-status="succeeded"]`)
      .waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('.msg.user', { hasText: `/approve always ${id}` }).count(), 1);
    const succeeded = page.locator('details.tool-call[data-status="succeeded"]');
    const before = await succeeded.count();
    await say('please echo without asking');
    await succeeded.nth(before).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('details.tool-call[data-status="awaiting-approval"]').count(), 0);
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
