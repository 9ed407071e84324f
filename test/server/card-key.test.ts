/** Issue 38: the card's signing key file (`card.signing`): what it may hold, and what a bad one says. */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCardKey } from '../../src/server/card-key.js';

const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-card-key-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('issue 38: the card signing key file', () => {
  it('issue 38: an EC P-256 PEM signs with ES256 under the configured kid; the public JWK has no private part', async () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'sec1' });
    const key = await readCardKey({ keyFile: file('ec.pem', pem as string), kid: 'k' });
    assert.equal(key.alg, 'ES256');
    assert.equal(key.publicJwk.kid, 'k');
    assert.equal(key.publicJwk.d, undefined);
  });

  it('issue 38: an RSA JWK signs with RS256, its own kid over the configured one', async () => {
    const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    const key = await readCardKey({ keyFile: file('rsa.jwk', JSON.stringify({ ...jwk, kid: 'own' })), kid: 'k' });
    assert.equal(key.alg, 'RS256');
    assert.equal(key.kid, 'own');
  });

  it('issue 38: a missing file, a file with no key, a public key and another curve are refused, naming the file', async () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'pem', type: 'pkcs8' });
    const publicOnly = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({
      format: 'pem',
      type: 'spki',
    });
    const cases: Array<[string, RegExp]> = [
      [join(dir, 'missing'), /no such file/],
      [file('text', 'hello'), /no private key/],
      [file('json', '{"kty": "EC"'), /not a JWK/],
      [file('public.pem', publicOnly as string), /no private key/],
      [file('p384.pem', p384 as string), /EC P-256 key \(ES256\) or an RSA key/],
    ];
    for (const [keyFile, pattern] of cases) {
      await assert.rejects(readCardKey({ keyFile, kid: 'k' }), (error: any) => {
        assert.equal(error.code, 'config_invalid');
        assert.match(error.message, pattern);
        assert.ok(error.message.includes(keyFile));
        return true;
      });
    }
  });
});
