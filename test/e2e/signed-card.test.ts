/**
 * Issue 38, signed cards: every card served, public and extended, carries a JWS over its
 * canonical JSON (A2A 1.0 section 8.4) that the JWKS the harness serves verifies; a key file
 * replaced while the harness runs signs the next card; a card changed by one byte fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCard } from '@a2a-js/sdk';
import { decodeProtectedHeader } from 'jose';
import { checkCardSignature, type CardKeys } from '@tiny-harness/conform/card-signature';
import { startTestHarness, TRANSPORTS, type TestHarness } from './support.js';

const ALICE = 'alice-token-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-card-key-'));
const keyFile = join(dir, 'card-key.pem');

function ecPem(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    format: 'pem',
    type: 'pkcs8',
  }) as string;
}

/** Writes the key file as an operator replacing it would: a new file moved over the old one. */
function replaceKeyFile(text: string): void {
  const next = join(dir, 'next-key');
  writeFileSync(next, text);
  renameSync(next, keyFile);
}

let h: TestHarness;
before(async () => {
  writeFileSync(keyFile, ecPem());
  h = await startTestHarness({
    config: { card: { signing: { keyFile, kid: 'card-1' } }, commands: { visibility: { status: 'authenticated' } } },
    harness: { auth: { tokens: new Map([[ALICE, 'alice']]) } },
  });
});
after(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function jwks(): Promise<CardKeys> {
  const response = await fetch(`${h.harness.url}/.well-known/jwks.json`);
  assert.equal(response.status, 200);
  const body = (await response.json()) as { keys: any[] };
  for (const key of body.keys) assert.equal(key.d, undefined, 'the JWKS holds a private key');
  return { keys: body.keys, source: 'the JWKS' };
}

async function publicCard(): Promise<any> {
  const response = await fetch(`${h.harness.url}/.well-known/agent-card.json`);
  assert.equal(response.status, 200);
  return response.json();
}

describe('issue 38: signed cards', () => {
  it('issue 38: the public card carries one JWS (ES256, the configured kid) that the served JWKS verifies', async () => {
    const card = await publicCard();
    assert.equal(card.signatures.length, 1);
    const header = decodeProtectedHeader(card.signatures[0]);
    assert.equal(header.alg, 'ES256');
    assert.equal(header.kid, 'card-1');
    assert.deepEqual(await checkCardSignature(card, await jwks()), { valid: true, kid: 'card-1', alg: 'ES256' });
  });

  it('issue 38: the same card keeps the same bytes, so its ETag still answers 304', async () => {
    const first = await fetch(`${h.harness.url}/.well-known/agent-card.json`);
    const etag = first.headers.get('etag')!;
    const again = await fetch(`${h.harness.url}/.well-known/agent-card.json`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
  });

  it('issue 38: a card altered by one byte fails, saying so', async () => {
    const card = await publicCard();
    const altered = JSON.parse(JSON.stringify(card).replace('An agent harness', 'An agent harnesS'));
    const check = await checkCardSignature(altered, await jwks());
    assert.equal(check.valid, false);
    assert.match((check as { why: string }).why, /changed after it was signed/);
  });

  for (const transport of TRANSPORTS) {
    it(`issue 38: the extended card over ${transport} is signed too, and verifies with the JWKS`, async () => {
      const client = await h.client(transport, { authorization: `Bearer ${ALICE}` });
      const extended = await client.getAgentCard();
      assert.equal(extended.signatures.length, 1);
      const check = await checkCardSignature(AgentCard.toJSON(extended), await jwks());
      assert.equal(check.valid, true, JSON.stringify(check));
    });
  }

  it('issue 38: key rotation: the replaced key file signs the next card, without a restart', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    replaceKeyFile(JSON.stringify({ ...rsa, kid: 'card-2' }));
    const card = await publicCard();
    const header = decodeProtectedHeader(card.signatures[0]);
    assert.equal(header.kid, 'card-2');
    assert.equal(header.alg, 'RS256');
    const keys = await jwks();
    assert.deepEqual(
      keys.keys.map((key) => key.kid),
      ['card-2', 'card-1'],
    );
    assert.equal((await checkCardSignature(card, keys)).valid, true);
    // A file that is no key now leaves the last good key signing.
    replaceKeyFile('not a key');
    assert.equal(decodeProtectedHeader((await publicCard()).signatures[0]).kid, 'card-2');
    replaceKeyFile(ecPem());
    assert.equal(decodeProtectedHeader((await publicCard()).signatures[0]).kid, 'card-1');
  });
});
