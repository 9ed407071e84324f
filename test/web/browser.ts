/**
 * Chromium for the page tests: Debian's `chromium` on PATH (or the program
 * TINY_HARNESS_CHROMIUM names), driven by playwright-core in a fresh profile, with the flags
 * this machine's closed network needs. Every page error and console error is collected, so a
 * test can assert there were none.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { program } from '../needs.js';

export const CHROMIUM = program(process.env['TINY_HARNESS_CHROMIUM'] ?? 'chromium', 'apt-get install -y chromium');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserPage {
  context: BrowserContext;
  page: Page;
  /** Page errors and console errors, as they happened. */
  problems: string[];
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export async function openBrowserPage(options: {
  waitMs: number;
  viewport?: { width: number; height: number };
}): Promise<BrowserPage> {
  const profile = mkdtempSync(join(tmpdir(), 'tiny-harness-chromium-'));
  const problems: string[] = [];
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM.path,
      headless: true,
      args: CHROMIUM_ARGS,
      ...(options.viewport ? { viewport: options.viewport } : {}),
      timeout: 30_000,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(options.waitMs);
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });
    return {
      context,
      page,
      problems,
      async close() {
        await context.close().catch(() => undefined);
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}

/** Goes to the page at `url` and waits until it has read the card (`body[data-ready]`). */
export async function loadPage(page: Page, url: string, waitMs: number): Promise<number | undefined> {
  const response = await page.goto(url, { timeout: waitMs });
  await page.waitForSelector('body[data-ready]', { timeout: waitMs });
  return response?.status();
}

/** A browser with the chat page at `url` loaded and ready. */
export async function openChatPage(
  url: string,
  options: { waitMs: number; viewport?: { width: number; height: number } },
): Promise<BrowserPage> {
  const browser = await openBrowserPage(options);
  try {
    await loadPage(browser.page, url, options.waitMs);
    return browser;
  } catch (error) {
    await browser.close();
    throw error;
  }
}
