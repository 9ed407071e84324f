/**
 * Issue 38, clients check: `chat`, `send` and `conform` with `--card-key` verify the card's
 * signature and refuse a card that fails, naming why; they never take a key the card names.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { canonicalizeAgentCard, type AgentCard } from '@a2a-js/sdk';
import { exportJWK, FlattenedSign } from 'jose';
import { CONFORM_EXIT, runConform, type ConformCommand, type ConformReport } from '@tiny-harness/conform';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { runCli } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-card-key-'));
const keyFile = join(dir, 'card-key.pem');
const jwksFile = join(dir, 'jwks.json');
const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });

let h: TestHarness;
let other: Server;
/** Serves the harness's card changed by one byte at `/altered/`, and one signed by another key that names its own JWKS at `/forged/`. */
let otherUrl: string;

async function harnessCard(): Promise<any> {
  return (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
}

before(async () => {
  writeFileSync(
    keyFile,
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
  );
  h = await startTestHarness({
    script: { reply: 'a model reply' },
    config: { card: { signing: { keyFile, kid: 'card-1' } } },
  });
  writeFileSync(jwksFile, await (await fetch(`${h.harness.url}/.well-known/jwks.json`)).text());
  other = createServer(async (req, res) => {
    const card = await harnessCard();
    if (req.url === '/forged/.well-known/agent-card.json') {
      const payload = new TextEncoder().encode(canonicalizeAgentCard(card as AgentCard));
      const jws = await new FlattenedSign(payload)
        .setProtectedHeader({ alg: 'ES256', kid: 'evil', typ: 'JOSE', jku: `${otherUrl}/jwks.json` })
        .sign(attacker.privateKey);
      card.signatures = [{ protected: jws.protected, signature: jws.signature }];
    } else if (req.url === '/jwks.json') {
      res.end(JSON.stringify({ keys: [{ ...(await exportJWK(attacker.publicKey)), kid: 'evil' }] }));
      return;
    } else card.description = card.description.replace('An agent', 'An agenT');
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(card));
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});

after(async () => {
  await h?.close();
  await new Promise((resolve) => other?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const jwksUrl = () => `${h.harness.url}/.well-known/jwks.json`;
const changed = /refused the agent card: the card's signature does not verify: .*changed after it was signed/;

async function conform(options: ConformCommand): Promise<{ code: number; report?: ConformReport; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (chunk) => (stdout += chunk));
  err.on('data', (chunk) => (stderr += chunk));
  const code = await runConform({ ...options, only: ['CMD-14'], json: true }, out, err);
  return { code, report: stdout ? JSON.parse(stdout) : undefined, stderr };
}

describe('issue 38: --card-key', () => {
  it('issue 38: send with --card-key (the JWKS URL) takes a card that verifies', async () => {
    const result = await runCli(['send', '--card-key', jwksUrl(), h.harness.url, 'hello']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'a model reply\n');
  });

  it('issue 38: send refuses a card altered by one byte, saying why', async () => {
    const result = await runCli(['send', '--card-key', jwksUrl(), `${otherUrl}/altered`, 'hello']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, changed);
    assert.equal(result.stdout, '');
  });

  it('issue 38: chat refuses a card altered by one byte, saying why, before it starts', async () => {
    const result = await runCli(['chat', '--card-key', jwksFile, `${otherUrl}/altered`]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, changed);
  });

  it('issue 38: a card signed by a key it names itself (jku) is refused: that key is never fetched', async () => {
    const result = await runCli(['send', '--card-key', jwksFile, `${otherUrl}/forged`, 'hello']);
    assert.notEqual(result.code, 0);
    assert.match(
      result.stderr,
      /no key with kid "evil" in .*jwks\.json \(the card names a key of its own in jku: not trusted\)/,
    );
  });

  it('issue 38: conform reports the card signed and valid with --card-key, signed and unchecked without', async () => {
    const checked = await conform({ url: h.harness.url, cardKey: jwksUrl() });
    assert.equal(checked.code, CONFORM_EXIT.ok, checked.stderr);
    assert.deepEqual(checked.report!.cardSignature, { signed: true, valid: true, kid: 'card-1', alg: 'ES256' });
    const unchecked = await conform({ url: h.harness.url });
    assert.deepEqual(unchecked.report!.cardSignature, { signed: true });
  });

  it('issue 38: conform refuses a card altered by one byte (exit cardRefused), saying why', async () => {
    const result = await conform({ url: `${otherUrl}/altered`, cardKey: jwksFile });
    assert.equal(result.code, CONFORM_EXIT.cardRefused);
    assert.match(result.stderr, changed);
  });
});
