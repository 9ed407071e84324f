/**
 * The page's fetch (web/src/reachability.ts): a proxy's 502, 503 or 504 says the harness cannot
 * be reached, but the harness's own 503 with a JSON-RPC error (a refusal to retry: it drains, or
 * is at its bound) is its answer, handed to the SDK's client, which reads the JSON-RPC error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HarnessUnreachable, harnessFetch } from '../../web/src/reachability.js';

const REFUSAL = {
  jsonrpc: '2.0',
  id: 1,
  error: { code: -32603, message: 'This server is shutting down and starts no new turn.' },
};

let server: Server;
let base = '';

before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/refusal') res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify(REFUSAL));
    else if (req.url === '/proxy-json')
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"down"}');
    else res.writeHead(503, { 'content-type': 'text/html' }).end('<h1>503 Service Unavailable</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the page's fetch and a 503", () => {
  it("the harness's 503 with a JSON-RPC error is handed on, its body whole", async () => {
    const response = await harnessFetch(`${base}/refusal`, { method: 'POST' });
    assert.equal(response.status, 503);
    assert.deepEqual(await response.json(), REFUSAL);
  });

  it("a proxy's 503, HTML or JSON that is no JSON-RPC error, says the harness cannot be reached", async () => {
    for (const path of ['/proxy-html', '/proxy-json'])
      await assert.rejects(harnessFetch(`${base}${path}`), (error) => error instanceof HarnessUnreachable);
  });
});
