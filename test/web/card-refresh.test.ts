/**
 * The chat page offers a command file added after it loaded: the card is read again when a
 * command name the page does not know is typed, before it is called unknown.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { poll, WAIT_MS } from '../support/wait.js';
import { CHROMIUM, openChatPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];

async function addCommandFile(name: string, description: string): Promise<void> {
  const folder = join(h!.dataDir, 'commands');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, `${name}.md`), `---\ndescription: ${description}\n---\nDo ${name}\n`);
  // The harness watches the folder: wait until its card lists the command.
  await poll(`the card to list /${name}`, async () => {
    const card = await (await fetch(`${h!.harness.url}/.well-known/agent-card.json`)).json();
    return JSON.stringify(card).includes(`"name":"${name}"`) || undefined;
  });
}

describe('the chat page reads the card again', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({ script: { reply: 'Deployed.' } });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    ({ page, problems } = browser);
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('a command file added after load is offered once its name is typed', async () => {
    await addCommandFile('dep', 'Deploys the thing');
    await page.locator('#input').pressSequentially('/dep', { delay: 5 });
    const option = page.locator('#completions [data-name="dep"]');
    await option.waitFor({ timeout: WAIT_MS });
    assert.equal(await option.locator('.option-description').textContent(), 'Deploys the thing');
  });

  it('a command file added after load is sent as a command, not asked about as unknown', async () => {
    await addCommandFile('ship', 'Ships it');
    await page.locator('#input').fill('');
    // Typed whole at once (no keystroke to read the card on), then sent.
    await page.locator('#input').fill('/ship now');
    await page.keyboard.press('Enter');
    await page.locator('.msg.user', { hasText: '/ship now' }).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('#error', { hasText: 'not a command' }).count(), 0, 'never called unknown');
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
