/**
 * Replies rendered as Markdown on the chat page, in Chromium: formatting shows as formatting,
 * code blocks get a copy button, and nothing a reply carries runs: no `<script>`, no `onerror=`,
 * no `javascript:` link, no remote image.
 */
import { after, before, describe, it } from 'node:test';
import { WAIT_MS } from '../support/wait.js';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { needs } from '../needs.js';
import { CHROMIUM, openChatPage, type BrowserPage } from './browser.js';
import { ensureBundle } from './bundle.js';

const REPLY = [
  'Here is **bold**, *emphasis* and `inline code`.',
  '',
  '- first',
  '- second',
  '',
  '```js',
  'const answer = 42;',
  '```',
  '',
  '[a link](https://example.com/ "the example") [click me](javascript:window.pwned=\'href\') ![tracker](https://example.com/pixel.png)',
  '',
  '<script>window.pwned = "script"</script>',
  '',
  '<img src="x" onerror="window.pwned = \'onerror\'">',
  '<iframe src="https://example.com/"></iframe>',
  '',
  '```',
  `const longest = '${'a line as wide as the block '.repeat(8)}';`,
  '```',
].join('\n');

let h: TestHarness | undefined;
let browser: BrowserPage | undefined;
let page: Page;
let problems: string[] = [];

describe('replies as Markdown on the chat page', needs(CHROMIUM), () => {
  before(async () => {
    ensureBundle();
    h = await startTestHarness({ script: { reply: REPLY } });
    browser = await openChatPage(`${h.harness.url}/`, { waitMs: WAIT_MS, viewport: { width: 1000, height: 800 } });
    ({ page, problems } = browser);
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.harness.url });
    await page.locator('#input').pressSequentially('show me some markdown', { delay: 5 });
    await page.keyboard.press('Enter');
    await page.locator('.msg.agent:not(.streaming)').waitFor({ timeout: WAIT_MS });
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('formatting shows as formatting: bold, emphasis, code, a list, a code block', async () => {
    const reply = page.locator('.msg.agent');
    assert.equal(await reply.locator('strong').textContent(), 'bold');
    assert.equal(await reply.locator('em').first().textContent(), 'emphasis');
    assert.equal(await reply.locator('p code').textContent(), 'inline code');
    assert.deepEqual(await reply.locator('ul > li').allTextContents(), ['first', 'second']);
    assert.equal((await reply.locator('.code-block pre').first().textContent())?.trim(), 'const answer = 42;');
    assert.doesNotMatch((await reply.innerText()) ?? '', /\*\*|```/, 'no Markdown markers left');
  });

  it('a code block has a copy button that copies its code', async () => {
    await page.locator('.msg.agent .code-block .copy').first().click();
    await page.locator('.msg.agent .code-block .copy', { hasText: 'Copied' }).waitFor({ timeout: WAIT_MS });
    assert.equal((await page.evaluate(() => navigator.clipboard.readText())).trim(), 'const answer = 42;');
  });

  it('the copy button covers no code, not even the end of a line as wide as the block', async () => {
    const blocks = page.locator('.msg.agent .code-block');
    assert.equal(await blocks.count(), 2);
    for (const block of await blocks.all()) {
      const button = await block.locator('.copy').boundingBox();
      const code = await block.locator('pre code').boundingBox();
      assert.ok(button && code, 'the button and the code are shown');
      const apart =
        button.y + button.height <= code.y ||
        code.y + code.height <= button.y ||
        button.x + button.width <= code.x ||
        code.x + code.width <= button.x;
      assert.ok(apart, `the button ${JSON.stringify(button)} overlaps the code ${JSON.stringify(code)}`);
    }
  });

  it('nothing in a reply runs: HTML in it shows as text; no javascript: link, no image', async () => {
    const reply = page.locator('.msg.agent');
    assert.equal(await reply.locator('script, img, iframe, [onerror], [onclick]').count(), 0);
    const text = await reply.innerText();
    assert.ok(text.includes('<script>window.pwned = "script"</script>'), 'HTML shows as the text it is');
    assert.ok(text.includes(`<img src="x" onerror="window.pwned = 'onerror'">`));
    const link = reply.locator('a', { hasText: 'a link' });
    assert.equal(await link.getAttribute('href'), 'https://example.com/');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await link.getAttribute('target'), '_blank');
    const clickMe = reply.locator('a', { hasText: 'click me' });
    assert.equal(await clickMe.getAttribute('href'), null, 'the javascript: address is gone');
    assert.equal(
      await reply.locator('a', { hasText: 'tracker' }).getAttribute('href'),
      'https://example.com/pixel.png',
      'an image is a link, not loaded',
    );
    await clickMe.click();
    await link.hover();
    assert.equal(await page.evaluate(() => (window as unknown as { pwned?: string }).pwned), undefined);
  });

  it('showed no script errors and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(problems, []);
  });
});
