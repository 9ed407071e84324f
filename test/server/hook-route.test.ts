/**
 * Issue 39, trigger URLs: what of a hook's path the log may hold, and the secret's check. The
 * route itself is driven end to end in test/e2e/schedule-hooks.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  hookSha256,
  newHookSecret,
  secretMatches,
  HOOK_SECRET_PATTERN,
} from '../../src/runtime/schedules/hook-secrets.js';
import { HarnessError } from '../../src/errors.js';
import { idempotencyKeyOf, isHookPath, redactHookPath } from '../../src/server/hook-route.js';

describe('issue 39: a hook URL in the log, and its secret', () => {
  it("issue 39: the log's path keeps a hook's id and never what follows it, in any case or shape", () => {
    const { secret } = newHookSecret();
    const cases: Array<[string, string]> = [
      [`/hooks/s0123456789/${secret}`, '/hooks/s0123456789/…'],
      [`/HOOKS/s0123456789/${secret}`, '/HOOKS/s0123456789/…'],
      [`/hooks/s0123456789/${secret}/more`, '/hooks/s0123456789/…'],
      // A secret where the id goes, or an id that is none of ours: nothing of it kept.
      [`/hooks/${secret}`, '/hooks/…'],
      [`/hooks/${secret}/${secret}`, '/hooks/…/…'],
      ['/hooks/', '/hooks/…'],
      ['/a2a/jsonrpc', '/a2a/jsonrpc'],
      ['/', '/'],
    ];
    for (const [path, logged] of cases) assert.equal(redactHookPath(path), logged, path);
    assert.equal(isHookPath(`/hooks/s0123456789/${secret}`), true);
    assert.equal(isHookPath('/hooksx/a'), false);
  });

  it('issue 39: a secret is 256 random bits in base64url, stored as its SHA-256, matched only by itself', () => {
    const { secret, sha256 } = newHookSecret();
    assert.match(secret, HOOK_SECRET_PATTERN);
    assert.equal(sha256, hookSha256(secret));
    assert.match(sha256, /^[0-9a-f]{64}$/);
    assert.ok(!sha256.includes(secret));
    assert.equal(secretMatches(secret, sha256), true);
    assert.equal(secretMatches(`${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`, sha256), false);
    assert.equal(secretMatches(secret, newHookSecret().sha256), false);
    // No hash stored (not a hook), or a damaged one: no secret matches, the all-zero one included.
    assert.equal(secretMatches(secret, undefined), false);
    assert.equal(secretMatches(secret, 'not hex'), false);
    assert.equal(secretMatches('', '0'.repeat(64)), false);
    assert.notEqual(newHookSecret().secret, secret);
  });

  it("issue 39: a POST's idempotency key: the draft's header first, then GitHub's delivery id; 1 to 200 printable ASCII characters, sent once", () => {
    assert.equal(idempotencyKeyOf({}), undefined);
    assert.equal(idempotencyKeyOf({ 'idempotency-key': ['a b~"q"'] }), 'a b~"q"');
    assert.equal(idempotencyKeyOf({ 'x-github-delivery': ['d1'] }), 'd1');
    assert.equal(idempotencyKeyOf({ 'idempotency-key': ['k1'], 'x-github-delivery': ['d1'] }), 'k1');
    assert.equal(idempotencyKeyOf({ 'idempotency-key': ['x'.repeat(200)] }), 'x'.repeat(200));
    const refused = (headers: NodeJS.Dict<string[]>, message: RegExp) =>
      assert.throws(
        () => idempotencyKeyOf(headers),
        (error: unknown) =>
          error instanceof HarnessError && error.code === 'request_invalid' && message.test(error.message),
      );
    for (const bad of ['', 'x'.repeat(201), 'a\u0001b', 'caf\u00e9', 'new\nline'])
      refused({ 'idempotency-key': [bad] }, /Idempotency-Key header must be 1 to 200 printable ASCII/);
    refused({ 'x-github-delivery': ['\u00ff'] }, /X-GitHub-Delivery header must be/);
    refused({ 'idempotency-key': ['a', 'b'] }, /Send one Idempotency-Key header, not 2/);
  });
});
