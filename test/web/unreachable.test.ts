/**
 * The chat page when the harness cannot be reached: behind a proxy that answers 502 Bad Gateway
 * with an HTML page, the page says in words that the harness cannot be reached, that it tries
 * again, never shows the HTML, and recovers by itself once the proxy reaches the harness again:
 * at load (the card) and for a message sent meanwhile.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { WAIT_MS } from '../support/wait.js';
import { CHROMIUM, openBrowserPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

const BAD_GATEWAY_PAGE =
  '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>';

let h: TestHarness | undefined;
let proxy: Server | undefined;
let proxyUrl = '';
/** While true, the proxy answers every request as a proxy whose upstream is down. */
let down = true;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];

function startProxy(target: URL): Promise<Server> {
  const server = createServer((req, res) => {
    // The page's own files still come (a page already loaded, or cached): the harness's routes fail.
    const harnessRoute = req.url?.startsWith('/a2a/') || req.url?.startsWith('/.well-known/');
    if (down && harnessRoute) {
      res.writeHead(502, 'Bad Gateway', { 'content-type': 'text/html' }).end(BAD_GATEWAY_PAGE);
      return;
    }
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const errorLine = () => page.locator('#error');

async function saysUnreachable(): Promise<void> {
  await errorLine().filter({ hasText: 'cannot be reached' }).waitFor({ timeout: WAIT_MS });
  const text = (await errorLine().textContent()) ?? '';
  assert.match(text, /502 Bad Gateway/, 'says what answered');
  assert.match(text, /Trying again in \d+ s/, 'says it tries again');
  assert.doesNotMatch(text, /<|html|<h1>/i, 'no HTML body');
}

describe('the chat page when the harness cannot be reached', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({ script: { reply: 'Back again.' } });
    proxy = await startProxy(new URL(h.harness.url));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    browser = await openBrowserPage({ waitMs: WAIT_MS });
    ({ page, problems } = browser);
  });

  after(async () => {
    await browser?.close();
    proxy?.closeAllConnections();
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
    await h?.close();
  });

  it('at load: says the harness cannot be reached and retries, then starts by itself once it can', async () => {
    down = true;
    await page.goto(`${proxyUrl}/`, { timeout: WAIT_MS });
    await saysUnreachable();
    assert.equal(await page.locator('body[data-ready]').count(), 0, 'not ready without the card');
    down = false;
    await page.waitForSelector('body[data-ready]', { timeout: WAIT_MS });
    assert.equal(await errorLine().isVisible(), false, 'the error line is gone');
  });

  it('a message sent meanwhile waits, says why, and is sent once the harness answers again', async () => {
    down = true;
    await page.locator('#input').pressSequentially('Are you there?', { delay: 5 });
    await page.keyboard.press('Enter');
    await saysUnreachable();
    await page.locator('.msg.user.retrying', { hasText: 'Are you there?' }).waitFor({ timeout: WAIT_MS });
    down = false;
    await page.locator('.msg.agent:not(.streaming)', { hasText: 'Back again.' }).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('.msg.user.retrying').count(), 0);
    assert.equal(await page.locator('.msg.user.unsent').count(), 0);
    assert.equal(await errorLine().isVisible(), false, 'the error line is gone');
    assert.equal(h!.chatRequests().length, 1, 'the message ran once');
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    // The browser logs each failed request (the proxy's 502s) as a console error: those are expected here.
    assert.deepEqual(
      problems.filter((p) => !/status of 502/.test(p)),
      [],
    );
  });
});
