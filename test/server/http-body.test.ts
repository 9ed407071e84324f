/**
 * Reading a request's JSON body on `node:http` (src/server/http-body.ts, issue 36), as express's
 * parser read it before: the size limit (413 as soon as it is known, and the client gets the
 * answer, not a reset), JSON whose top level is an object or an array, an empty body as `{}`,
 * other media types left unread.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isHarnessError } from '../../src/errors.js';
import { parseByteLimit, readJsonBody, type ReadRequest } from '../../src/server/http-body.js';

let server: Server;
let port: number;

before(async () => {
  // Answers what the reader made of the body: `{ body }`, or `{ refused: code }`.
  server = createServer((req: ReadRequest, res) => {
    readJsonBody(req, 64).then(
      () => res.end(JSON.stringify({ body: req.body ?? null })),
      (error: unknown) => {
        res.statusCode = 400;
        res.end(JSON.stringify({ refused: isHarnessError(error) ? error.code : String(error) }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

/** POSTs `chunks` (chunked when there are several), and reads the answer. */
function post(chunks: string[], type = 'application/json'): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': type };
    if (chunks.length === 1) headers['content-length'] = String(Buffer.byteLength(chunks[0]!));
    const req = request({ host: '127.0.0.1', port, method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('a request body read on node:http (issue 36)', () => {
  it('reads JSON of the JSON media types, and an empty body as {}', async () => {
    assert.deepEqual(await post(['{"a": 1}']), { body: { a: 1 } });
    assert.deepEqual(await post(['[1]'], 'application/a2a+json; charset=utf-8'), { body: [1] });
    assert.deepEqual(await post([''], 'application/vnd.x+json'), { body: {} });
    assert.deepEqual(await post(['{"a": 1}'], 'text/plain'), { body: null }, 'another media type is left unread');
  });

  it('refuses a body past the limit, by its length or as it arrives, with an answer', async () => {
    assert.deepEqual(await post([`{"a": "${'x'.repeat(100)}"}`]), { refused: 'request_too_large' });
    assert.deepEqual(await post(['{"a": "', 'x'.repeat(40), 'x'.repeat(40), '"}']), { refused: 'request_too_large' });
  });

  it('refuses what is not a JSON object or array', async () => {
    assert.deepEqual(await post(['"text"']), { refused: 'request_unparsable' });
    assert.deepEqual(await post(['{not json']), { refused: 'request_unparsable' });
  });

  it('reads a limit as express did', () => {
    assert.equal(parseByteLimit('4mb'), 4 * 1024 * 1024);
    assert.equal(parseByteLimit('512kb'), 512 * 1024);
    assert.equal(parseByteLimit('100'), 100);
    assert.throws(() => parseByteLimit('lots'), /4mb/);
  });
});
