/**
 * How the HTTP app serves the chat page: the built files at `/` with a Content-Security-Policy
 * and their caching, a page saying to build when there is no build, the JSON 404 everywhere
 * else, and the A2A routes untouched. Uses a stand-in page folder, not the real build.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentCard } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { silentLogger } from '../../src/log.js';
import { compose, handlerTerminal } from '../../src/a2a/index.js';
import { createHttpApp } from '../../src/server/http-app.js';
import { bundledWebDir, PAGE_CSP } from '../../src/server/web-page.js';

const card = { name: 'stand-in', supportedInterfaces: [], capabilities: {} };
const path = compose([], handlerTerminal({} as A2ARequestHandler));

const folder = mkdtempSync(join(tmpdir(), 'tiny-harness-web-'));
const built = join(folder, 'built');
const servers: Server[] = [];

async function serve(webDir: string | undefined): Promise<string> {
  const server = createServer(
    createHttpApp({
      path,
      card: async () => card as unknown as AgentCard,
      bodyLimit: '1mb',
      log: silentLogger,
      webDir,
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

before(() => {
  mkdirSync(built);
  writeFileSync(
    join(built, 'index.html'),
    '<!doctype html><title>chat</title><script type="module" src="./main-ABCDEF12.js"></script>',
  );
  writeFileSync(join(built, 'main-ABCDEF12.js'), 'console.log(1)');
  writeFileSync(join(built, 'main-ABCDEF12.js.map'), '{}');
});

after(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => (s.closeAllConnections(), s.close(resolve)))));
  rmSync(folder, { recursive: true, force: true });
});

describe('the chat page', () => {
  it('is index.html at /, not cached without revalidation, under a strict Content-Security-Policy', async () => {
    const url = await serve(built);
    for (const path of ['/', '/index.html']) {
      const response = await fetch(url + path);
      assert.equal(response.status, 200, path);
      assert.match(response.headers.get('content-type')!, /^text\/html/);
      assert.match(await response.text(), /<title>chat<\/title>/);
      assert.equal(response.headers.get('cache-control'), 'no-cache');
      assert.ok(response.headers.get('etag'), 'revalidated with an ETag');
      assert.equal(response.headers.get('content-security-policy'), PAGE_CSP);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    }
    assert.match(PAGE_CSP, /default-src 'self'/);
    assert.match(PAGE_CSP, /script-src 'self'(;|$)/);
    assert.doesNotMatch(PAGE_CSP, /unsafe-inline|unsafe-eval|\*/);
  });

  it('serves the content-hashed files cached for a year', async () => {
    const url = await serve(built);
    for (const file of ['main-ABCDEF12.js', 'main-ABCDEF12.js.map']) {
      const response = await fetch(`${url}/${file}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      await response.text();
    }
    // Not fetch: with a conditional header it also sends `cache-control: no-cache`, as browsers do on a reload.
    const etag = (await fetch(`${url}/`)).headers.get('etag')!;
    const status = await new Promise<number | undefined>((resolve, reject) =>
      get(`${url}/`, { headers: { 'if-none-match': etag } }, (res) => (res.resume(), resolve(res.statusCode))).on(
        'error',
        reject,
      ),
    );
    assert.equal(status, 304, 'index.html is revalidated, not sent again');
  });

  it('leaves every other path to the JSON 404, and other methods too', async () => {
    const url = await serve(built);
    for (const [method, path] of [
      ['GET', '/nosuch'],
      ['GET', '/main.js'],
      ['GET', '/.hidden'],
      ['POST', '/'],
      ['DELETE', '/index.html'],
    ] as const) {
      const response = await fetch(url + path, { method });
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.deepEqual((await response.json()).error.code, 404);
    }
  });

  it('does not shadow the card or the A2A routes', async () => {
    const url = await serve(built);
    const response = await fetch(`${url}/.well-known/agent-card.json`);
    assert.equal(response.status, 200);
    assert.equal((await response.json()).name, 'stand-in');
    const rpc = await fetch(`${url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    assert.equal((await rpc.json()).error.code, -32700);
  });

  it('without a build, / says to run npm run build (not a 404), and other paths stay 404', async () => {
    const url = await serve(join(folder, 'never-built'));
    const response = await fetch(`${url}/`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/html/);
    assert.equal(response.headers.get('content-security-policy'), PAGE_CSP);
    assert.match(await response.text(), /npm run build/);
    assert.equal((await fetch(`${url}/main-ABCDEF12.js`)).status, 404);
    assert.equal((await fetch(`${url}/nosuch`)).status, 404);
  });

  it('without a page folder at all, / is the JSON 404 as before', async () => {
    const url = await serve(undefined);
    assert.equal((await fetch(`${url}/`)).status, 404);
  });

  it('is found at <package root>/dist/web from the sources and from the compiled files', () => {
    const root = join(folder, 'pkg');
    assert.equal(
      bundledWebDir(pathToFileURL(join(root, 'src', 'server', 'web-page.ts')).href),
      join(root, 'dist', 'web'),
    );
    assert.equal(
      bundledWebDir(pathToFileURL(join(root, 'dist', 'src', 'server', 'web-page.js')).href),
      join(root, 'dist', 'web'),
    );
    assert.match(bundledWebDir(), /[/\\]dist[/\\]web$/);
  });
});
