/** The webhook sender's address check (issue 24): non-public addresses refused at creation and after DNS at delivery. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { checkWebhookUrl, isPublicAddress, postWebhook } from '../../src/server/push-sender.js';

describe('issue 24: webhook addresses', () => {
  it('issue 24: loopback, private, link-local, unique-local, unspecified, multicast and reserved addresses are not public', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '224.0.0.1',
      '240.0.0.1',
      '255.255.255.255',
      '192.0.2.1',
      '198.18.0.1',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:8.8.8.8',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '2001:db8::1',
      '64:ff9b::a00:1',
      '2002:7f00:1::',
      'not-an-address',
    ])
      assert.equal(isPublicAddress(address), false, address);
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '2a00:1450::1'])
      assert.equal(isPublicAddress(address), true, address);
  });

  it('issue 24: a config URL on a private address or a name resolving to one is refused, unless private networks are allowed', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://[::1]/hook', 'http://localhost/hook', 'https://10.0.0.8/'])
      assert.match((await checkWebhookUrl(url, false)) ?? '', /not on a public address/, url);
    assert.match((await checkWebhookUrl('ftp://example.com/', false)) ?? '', /http/);
    assert.match((await checkWebhookUrl('not a url', true)) ?? '', /http/);
    assert.equal(await checkWebhookUrl('http://localhost/hook', true), undefined);
    assert.equal(await checkWebhookUrl('http://8.8.8.8/hook', false), undefined);
  });

  it('issue 24: at delivery, a name that resolves to a private address is refused after DNS, before connecting', async (t) => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.writeHead(200).end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const port = (server.address() as AddressInfo).port;
    const post = { body: '{}', headers: {}, timeoutMs: 5000 };
    await assert.rejects(postWebhook({ ...post, url: `http://localhost:${port}/`, allowPrivate: false }), /not public/);
    await assert.rejects(
      postWebhook({ ...post, url: `http://127.0.0.1:${port}/`, allowPrivate: false }),
      /not a public address/,
    );
    assert.equal(requests, 0);
    await postWebhook({ ...post, url: `http://127.0.0.1:${port}/`, allowPrivate: true });
    assert.equal(requests, 1);
  });

  it('issue 24: a redirect is not followed: a 3xx fails the delivery', async (t) => {
    const server = createServer((_req, res) => res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    await assert.rejects(
      postWebhook({ url, body: '{}', headers: {}, timeoutMs: 5000, allowPrivate: true }),
      /HTTP 302/,
    );
  });

  it('issue 33: deliveries to one receiver reuse one kept-alive connection', async (t) => {
    const ports: number[] = [];
    const server = createServer((req, res) => {
      ports.push(req.socket.remotePort!);
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    for (let i = 0; i < 5; i++)
      await postWebhook({ url, body: '{}', headers: {}, timeoutMs: 5000, allowPrivate: true });
    assert.equal(ports.length, 5);
    assert.equal(new Set(ports).size, 1, `one connection for five POSTs: ${ports.join(', ')}`);
  });
});
