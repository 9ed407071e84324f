/**
 * Issue 38, the page signs in: an agent whose card asks for a token gets one from the page's
 * form, kept in sessionStorage only; a token the harness refuses as expired is said to be
 * expired in plain words, and the message waiting on it goes once a new one is given.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { startTestIssuer, TEST_AUDIENCE, type TestIssuer } from '../fixtures/oidc-issuer.js';
import { needs } from '../needs.js';
import { WAIT_MS } from '../support/wait.js';
import { CHROMIUM, openBrowserPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

let issuer: TestIssuer;
let h: TestHarness;
let browser: BrowserPage | undefined;
let page: Page;

const signIn = () => page.locator('#sign-in');

async function giveToken(token: string): Promise<void> {
  await page.locator('#token').fill(token);
  await page.locator('#sign-in button[type=submit]').click();
  await signIn().waitFor({ state: 'hidden', timeout: WAIT_MS });
}

describe('issue 38: the page signs in', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    issuer = await startTestIssuer();
    h = await startTestHarness({
      script: { reply: 'Signed in and answering.' },
      config: { auth: { oidc: { issuer: issuer.issuer, audience: TEST_AUDIENCE } } },
    });
    browser = await openBrowserPage({ waitMs: WAIT_MS });
    page = browser.page;
  });

  after(async () => {
    await browser?.close();
    await h?.close();
    await issuer?.close();
  });

  it('issue 38: asks for a token when the card says one is needed, and keeps it for the session only', async () => {
    await page.goto(`${h.harness.url}/`, { timeout: WAIT_MS });
    await signIn().waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.match((await page.locator('#sign-in-why').textContent()) ?? '', /needs you to sign in/);
    const token = await issuer.token('alice');
    await giveToken(token);
    await page.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('tiny-harness/token'),
      local: JSON.stringify(localStorage),
    }));
    assert.equal(stored.session, token);
    assert.ok(!stored.local.includes(token), 'never in localStorage');
    await page.locator('#input').fill('Hello?');
    await page.keyboard.press('Enter');
    await page.locator('.msg.agent:not(.streaming)', { hasText: 'Signed in and answering.' }).waitFor();
  });

  it('issue 38: says clearly when the token has expired, and sends the waiting message with the new one', async () => {
    const expired = await issuer.token('alice', { expiresIn: -3600 });
    await page.evaluate((value) => sessionStorage.setItem('tiny-harness/token', value), expired);
    const before = h.chatRequests().length;
    await page.locator('#input').fill('Still there?');
    await page.keyboard.press('Enter');
    await signIn().waitFor({ state: 'visible', timeout: WAIT_MS });
    assert.match((await page.locator('#sign-in-why').textContent()) ?? '', /Your token has expired/);
    assert.equal(
      await page.evaluate(() => sessionStorage.getItem('tiny-harness/token')),
      null,
      'the refused token is dropped',
    );
    await giveToken(await issuer.token('alice'));
    await page.locator('.msg.agent:not(.streaming)', { hasText: 'Signed in and answering.' }).nth(1).waitFor();
    assert.equal(h.chatRequests().length, before + 1, 'the message ran once');
  });

  it('showed no script errors', () => {
    // The browser logs each refused request (the 401s) as a console error: those are expected here.
    assert.deepEqual(
      browser!.problems.filter((p) => !/status of 401/.test(p)),
      [],
    );
  });
});
