/**
 * A running sub-agent on the chat page in Chromium: the note a parent receives when a delegated
 * sub-task starts (`tiny-harness/subtask-note` naming its agent) has a chip with the agent's
 * name and the sub-task's state, kept current; it opens the sub-task's own conversation in a
 * new tab (`?task=<id>`), which follows its running turn and leaves the page's kept conversation
 * alone. The agent is the SDK alone (test/client/bare-agent.ts, serving the built page), which
 * sends the notes the harness's `delegate` tool sends.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { connect, userMessage } from '../../src/client/connect.js';
import { startBareAgent, type BareAgent } from '../client/bare-agent.js';
import { needs } from '../needs.js';
import { WAIT_MS } from '../support/wait.js';
import { CHROMIUM, openChatPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

let bare: BareAgent | undefined;
let release: () => void = () => {};
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];

/** Starts a task on the agent that stays working until released; resolves with its id. */
async function startHeldTask(): Promise<string> {
  const { client } = await connect(bare!.url, []);
  const events = client.sendMessageStream({
    tenant: '',
    message: userMessage('hold', {}),
    configuration: undefined,
    metadata: {},
  });
  const first = await events.next();
  void (async () => {
    for await (const _ of events);
  })();
  const payload = first.value?.payload;
  assert.equal(payload?.$case, 'task');
  return payload.value.id;
}

describe('a running sub-agent on the chat page', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    bare = await startBareAgent({ hold: new Promise<void>((resolve) => (release = resolve)), page: true });
    browser = await openChatPage(`${bare.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    ({ page, problems } = browser);
  });

  after(async () => {
    release();
    await browser?.close();
    await bare?.close();
  });

  it("issue 35: a sub-agent is a chip with its name and state that opens the sub-task's own stream in a new tab", async () => {
    const subtask = await startHeldTask();
    await page.locator('#input').pressSequentially(`delegate ${subtask} TASK_STATE_WORKING`, { delay: 2 });
    await page.keyboard.press('Enter');
    const chip = page.locator(`.msg.note a.subagent-chip[data-task-id="${subtask}"]`);
    // The agent's held task never says WORKING: it stays SUBMITTED until released.
    await chip.locator('.subagent-state', { hasText: 'submitted' }).waitFor({ timeout: WAIT_MS });
    assert.equal(await chip.locator('.subagent-name').textContent(), '↳ sub-agent reviewer');
    assert.equal(await chip.getAttribute('href'), `?task=${subtask}`);
    assert.equal(await chip.getAttribute('target'), '_blank');
    await page.locator('.msg.agent', { hasText: `echo: delegate ${subtask}` }).waitFor({ timeout: WAIT_MS });
    const kept = () => page.evaluate(() => localStorage.getItem('tiny-harness/conversation'));
    const keptBefore = await kept();

    const [tab] = await Promise.all([browser!.context.waitForEvent('page', { timeout: WAIT_MS }), chip.click()]);
    await tab.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    await tab.locator('.msg.user', { hasText: 'hold' }).waitFor({ timeout: WAIT_MS });
    assert.match(
      (await tab.locator('#task-info').textContent()) ?? '',
      new RegExp(`task ${subtask.slice(0, 8)} · submitted`),
    );
    release();
    await tab.locator('.msg.agent', { hasText: 'echo: hold' }).waitFor({ timeout: WAIT_MS });
    await chip.locator('.subagent-state', { hasText: 'completed' }).waitFor({ timeout: WAIT_MS });
    assert.equal(await kept(), keptBefore, "the page's kept conversation is still its own");
    assert.ok(!keptBefore?.includes(subtask), keptBefore ?? '');
    await tab.close();
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
