/**
 * The chat page behind a reverse proxy that serves the harness under a path (`/agent/`), with
 * a card naming a public address the browser cannot reach: the page must read the card and
 * talk JSON-RPC beside itself, through the proxy, and never follow the card's addresses.
 * Chromium as in page.test.ts; every wait is bounded.
 */
import { after, before, describe, it } from 'node:test';
import { WAIT_MS } from '../support/wait.js';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { CHROMIUM, loadPage, openBrowserPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

const PREFIX = '/agent/';
/** What the card names: nothing listens there (port 9, discard), so a page that followed it would fail. */
const UNREACHABLE_PUBLIC_URL = 'http://127.0.0.1:9/elsewhere';

let h: TestHarness | undefined;
let proxy: Server | undefined;
let proxyUrl = '';
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];
const requested: string[] = [];

/** Forwards `/agent/<rest>` to the harness's `/<rest>`, streaming both ways; anything else is a 404. */
function startProxy(target: URL): Promise<Server> {
  const server = createServer((req, res) => {
    if (!req.url?.startsWith(PREFIX)) {
      res.writeHead(404).end('not under the prefix');
      return;
    }
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: `/${req.url.slice(PREFIX.length)}`,
        headers: { ...req.headers, host: target.host },
      },
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

describe('the chat page behind a proxy, under a path', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({
      script: { reply: 'Answered through the proxy.' },
      harness: { publicUrl: UNREACHABLE_PUBLIC_URL },
    });
    proxy = await startProxy(new URL(h.harness.url));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    browser = await openBrowserPage({ waitMs: WAIT_MS });
    ({ page, problems } = browser);
    page.on('request', (req) => requested.push(req.url()));
  });

  after(async () => {
    await browser?.close();
    proxy?.closeAllConnections();
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
    await h?.close();
  });

  it('the card names the public address, not the one the browser uses', async () => {
    const card = await (await fetch(`${proxyUrl}${PREFIX}.well-known/agent-card.json`)).json();
    assert.equal(card.supportedInterfaces[0].url, `${UNREACHABLE_PUBLIC_URL}/a2a/jsonrpc`);
  });

  it('reads the card and talks JSON-RPC beside itself: a command and a question are answered', async () => {
    assert.equal(await loadPage(page, `${proxyUrl}${PREFIX}`, WAIT_MS), 200);
    await page.locator('#input').click();
    await page.locator('#input').pressSequentially('/status', { delay: 5 });
    await page.keyboard.press('Escape');
    await page.keyboard.press('Enter');
    await page.locator('.msg.command[data-command="status"]').waitFor({ timeout: WAIT_MS });
    await page.locator('#input').pressSequentially('Hello?', { delay: 5 });
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => document.querySelector('.msg.agent:not(.streaming)')?.textContent?.trim() === 'Answered through the proxy.',
      undefined,
      { timeout: WAIT_MS },
    );

    assert.ok(
      requested.some((url) => url === `${proxyUrl}${PREFIX}a2a/jsonrpc`),
      'JSON-RPC went through the proxy',
    );
    assert.deepEqual(
      requested.filter((url) => !url.startsWith(`${proxyUrl}${PREFIX}`) && !url.startsWith('data:')),
      [],
      'every request stayed under the page’s own path',
    );
    assert.deepEqual(problems, []);
  });
});
