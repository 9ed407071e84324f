/**
 * The built-in `fetch` tool (TOOL-6 bounds): the push SSRF guard on every hop (127.0.0.1,
 * `localhost`, `[::1]` and a redirect to them refused unless private networks are allowed), and
 * its bounds: redirects, bytes read, time, binary bodies, `toolOutputChars`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { workspaceSchema } from '../../src/config/workspace.js';
import { silentLogger } from '../../src/log.js';
import { fetchUrl } from '../../src/tools/workspace-fetch.js';
import { WorkspaceTools } from '../../src/tools/workspace-tools.js';

let server: Server;
let base: string;
const requested: string[] = [];
const signal = new AbortController().signal;
const BIG = 'x'.repeat(64 * 1024);

before(async () => {
  server = createServer((req, res) => {
    requested.push(req.url ?? '');
    const [path, query] = (req.url ?? '').split('?');
    if (path === '/text') return res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('plain ✓');
    if (path === '/json') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}');
    if (path === '/html')
      return res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>Hi</p></body></html>');
    if (path === '/gzip')
      return res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('zipped'));
    if (path === '/png') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0]));
    if (path === '/missing') return res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
    if (path === '/endless') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // Writes until the reader goes: a body with no end is cut by the byte bound.
      const more = () => {
        while (!res.destroyed && res.write(BIG));
      };
      res.on('drain', more);
      return more();
    }
    if (path === '/silent') return; // never answers
    if (path === '/to') return res.writeHead(302, { location: decodeURIComponent(query ?? '') }).end();
    if (path === '/loop') return res.writeHead(301, { location: '/loop' }).end();
    res.writeHead(500).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const config = (extra: Record<string, unknown> = {}) =>
  workspaceSchema.parse({ root: '.', tools: ['fetch'], fetch: { allowPrivateNetworks: true, ...extra } }).fetch;
const guarded = workspaceSchema.parse({ root: '.', tools: ['fetch'] }).fetch;
const to = (target: string) => `${base}/to?${encodeURIComponent(target)}`;

describe('the fetch tool (TOOL-6)', () => {
  it('TOOL-6: fetch refuses 127.0.0.1, localhost and [::1] unless private networks are allowed; nothing is requested', async () => {
    const port = (server.address() as AddressInfo).port;
    requested.length = 0;
    for (const url of [`${base}/text`, `http://localhost:${port}/text`, `http://[::1]:${port}/text`]) {
      const outcome = await fetchUrl({ url }, guarded, signal);
      assert.equal(outcome.ok, false, url);
      assert.match(
        outcome.text,
        /^Refused: .* is not on a public address \(workspace\.fetch\.allowPrivateNetworks is off\)/,
      );
    }
    assert.deepEqual(requested, []);
  });

  it('TOOL-6: fetch checks every redirect: one to 127.0.0.1 or localhost is refused, and never requested', async () => {
    const port = (server.address() as AddressInfo).port;
    // The first hop's origin alone is let through, as a public server would be.
    const exempt = (url: URL) => url.href.startsWith(`${base}/to?`);
    for (const target of [`${base}/text`, `http://localhost:${port}/text`]) {
      requested.length = 0;
      const outcome = await fetchUrl({ url: to(target) }, guarded, signal, { exempt });
      assert.equal(outcome.ok, false, target);
      assert.match(outcome.text, /^Refused: .* is not on a public address/);
      assert.equal(requested.length, 1, 'only the first hop reached the server');
    }
  });

  it('TOOL-6: fetch follows at most maxRedirects redirects', async () => {
    const outcome = await fetchUrl({ url: `${base}/loop` }, config({ maxRedirects: 3 }), signal);
    assert.equal(outcome.ok, false);
    assert.match(outcome.text, /^Stopped after 3 redirects/);
    const followed = await fetchUrl({ url: to(`${base}/json`) }, config(), signal);
    assert.equal(followed.ok, true);
    assert.match(followed.text, /^GET .*\/json: HTTP 200 \(application\/json\)\n\[after 1 redirect, from .*\/to\?/);
    assert.match(followed.text, /\n\n\{"a":1\}$/);
  });

  it('TOOL-6: fetch stops reading past maxBytes and says so', async () => {
    const outcome = await fetchUrl({ url: `${base}/endless` }, config({ maxBytes: 100_000 }), signal);
    assert.equal(outcome.ok, true);
    assert.match(outcome.text, /\[body cut: reading stopped after 100000 bytes \(workspace\.fetch\.maxBytes\)\]/);
    assert.equal(outcome.text.split('\n\n')[1]!.length, 100_000);
  });

  it('TOOL-6: fetch gives up after timeoutMs and says so', async () => {
    const outcome = await fetchUrl({ url: `${base}/silent` }, config({ timeoutMs: 100 }), signal);
    assert.equal(outcome.ok, false);
    assert.match(outcome.text, /^No whole answer from 127\.0\.0\.1:\d+ within 100 ms/);
  });

  it('fetch returns text, JSON and gzipped bodies as text, HTML as sent with a note, and refuses a binary body', async () => {
    assert.match((await fetchUrl({ url: `${base}/text` }, config(), signal)).text, /\n\nplain ✓$/);
    assert.match((await fetchUrl({ url: `${base}/gzip` }, config(), signal)).text, /\n\nzipped$/);
    const html = await fetchUrl({ url: `${base}/html` }, config(), signal);
    assert.match(html.text, /\[raw HTML, as the server sent it: not converted to text\]\n\n<html>/);
    const png = await fetchUrl({ url: `${base}/png` }, config(), signal);
    assert.equal(png.ok, false);
    assert.match(png.text, /\[a binary body \(image\/png\): fetch returns text only\]$/);
    const missing = await fetchUrl({ url: `${base}/missing` }, config(), signal);
    assert.equal(missing.ok, false);
    assert.match(missing.text, /HTTP 404 .*\n\nno such page$/);
  });

  it('fetch takes only an absolute http(s) URL', async () => {
    await assert.rejects(fetchUrl({ url: 'ftp://example.com/' }, config(), signal), /Only http/);
    await assert.rejects(fetchUrl({ url: 'example.com' }, config(), signal), /needs "url"/);
  });

  it('the fetch entry: asks only when fetch.approve is on, its output within toolOutputChars', async () => {
    const open = async (fetch: Record<string, unknown>) => {
      const workspace = workspaceSchema.parse({
        root: '.',
        tools: ['fetch'],
        fetch: { allowPrivateNetworks: true, ...fetch },
      });
      const box = await WorkspaceTools.open({ config: workspace, env: {}, toolOutputChars: 500, log: silentLogger });
      return box.entries()[0]!;
    };
    const entry = await open({});
    assert.equal(entry.needsApproval, false);
    assert.equal((await open({ approve: true })).needsApproval, true);
    const outcome = await entry.call({ url: `${base}/endless` }, signal);
    assert.equal(outcome.status, 'succeeded');
    assert.match(outcome.output, /\[output cut: the first 500 of \d+ characters are shown\]$/);
    const refused = await entry.call({ url: 'file:///etc/passwd' }, signal);
    assert.deepEqual(refused, { status: 'failed', output: 'Only http:// and https:// URLs can be fetched.' });
  });
});
