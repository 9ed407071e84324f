/**
 * Commands sent on the chat page while a turn runs and a message waits in the task's queue
 * (issue 33): `/model` and `/spawn` are answered at once, each on its own stream, which ends
 * with its reply; the turn's reply is drawn once, under its message; the header names the model
 * `/model` chose; and the conversation reopened is drawn in the order it was drawn live. The
 * fixture model holds a reply whose prompt says "hold" until the test lets it go.
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
/** The header's model once the first turn has ended, its reply written by the model it had. */
let modelWhileQueuedRuns: string | null = null;
/** Lets go of the first turn's reply, and of the queued one's. */
let releaseFirst: () => void = () => {};
let releaseQueued: () => void = () => {};
const first = new Promise<void>((resolve) => (releaseFirst = resolve));
const queued = new Promise<void>((resolve) => (releaseQueued = resolve));

/** The transcript's entries, top to bottom: the kind of each and the start of its text. */
function transcript(): Promise<string[]> {
  return page.$$eval('#log > .msg', (els) =>
    els.map((el) => {
      const kind = ['queued', 'user', 'command', 'note', 'agent'].find((k) => el.classList.contains(k));
      const text = (el.textContent ?? '').trim().replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, 'ID');
      return `${kind}: ${text.slice(0, 40)}`;
    }),
  );
}

/** Types `text` and sends it with Enter; `Escape` first closes the command list. */
async function type(text: string, escape = false): Promise<void> {
  await page.locator('#input').pressSequentially(text, { delay: 5 });
  if (escape) await page.keyboard.press('Escape');
  await page.keyboard.press('Enter');
}

async function idle(): Promise<void> {
  await page.waitForFunction(
    () => !document.body.dataset['streaming'] && document.querySelector('.msg.agent.streaming') === null,
    undefined,
    { timeout: WAIT_MS },
  );
}

/** What the page shows after /model and /spawn during a held turn with a message queued behind it. */
const LIVE = [
  'user: please hold one',
  'agent: re: please hold one alpha beta gamma',
  'user: /model fixture:large',
  'command: /modelThis task now uses fixture:large (',
  'user: /spawn a side job',
  'command: /spawnStarted sub-task ID. It works on i',
  'note: Sub-task ID (/spawn) completed. Its resu',
  'user: hold the queued one',
  'agent: re: hold the queued one alpha beta gamma',
];

describe('commands on the chat page during a turn, with a message queued', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({
      script: {
        reply: (body) => `re: ${lastMessage(body).content} alpha beta gamma`,
        hold: (body) => {
          const asked = lastMessage(body).content;
          if (asked.includes('please hold')) return { afterChunks: 2, until: first };
          return asked.includes('hold the queued') ? { afterChunks: 2, until: queued } : undefined;
        },
      },
    });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 900 } });
    ({ page, problems } = browser);
    await type('please hold one');
    await page.locator('.msg.agent.streaming', { hasText: 're: please' }).waitFor({ timeout: WAIT_MS });
    await type('hold the queued one');
    await page.locator('.msg.user.queued', { hasText: 'hold the queued one' }).waitFor({ timeout: WAIT_MS });
    await type('/model fixture:large', true);
    await page.locator('.msg.command[data-command="model"]').waitFor({ timeout: WAIT_MS });
    await type('/spawn a side job', true);
    await page.locator('.msg.note', { hasText: 'completed' }).waitFor({ timeout: WAIT_MS });
    releaseFirst();
    // The first turn has ended (its reply whole), the queued one writes.
    await page.locator('.msg.agent.streaming', { hasText: 're: hold' }).waitFor({ timeout: WAIT_MS });
    modelWhileQueuedRuns = await page.locator('#task-info').getAttribute('data-model');
    releaseQueued();
    await page
      .locator('.msg.agent:not(.streaming)', { hasText: 're: hold the queued one' })
      .waitFor({ timeout: WAIT_MS });
    await idle();
  });

  after(async () => {
    releaseFirst();
    releaseQueued();
    await browser?.close();
    await h?.close();
  });

  it("a command's stream ends with its reply: the running turn's reply is drawn once, under its message", async () => {
    assert.deepEqual(await transcript(), LIVE);
    assert.equal(await page.locator('.msg.agent', { hasText: 'hold one alpha beta gamma' }).count(), 1, 'drawn once');
  });

  it('/model during a turn: the header names the model /model chose, not the one the running turn had', async () => {
    assert.equal(modelWhileQueuedRuns, 'fixture:large', "after the first turn's reply (by fixture:small)");
    assert.equal(await page.locator('#task-info').getAttribute('data-model'), 'fixture:large');
    assert.match((await page.locator('#task-info').textContent()) ?? '', /fixture:large$/);
  });

  it('reopened, the conversation is drawn in the order it was drawn live (the order of the task’s history)', async () => {
    await page.reload();
    await page.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    await page.locator('.msg.agent', { hasText: 're: hold the queued one' }).waitFor({ timeout: WAIT_MS });
    assert.deepEqual(await transcript(), LIVE);
    assert.equal(await page.locator('#task-info').getAttribute('data-model'), 'fixture:large');
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
