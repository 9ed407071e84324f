/**
 * The pack test's word for a package npm's cache lacks (test/support/scratch-install.ts): npm's
 * ENOTCACHED errors, offline, named by package, or a tarball by its file name.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { notCached } from '../support/scratch-install.js';

describe("what an offline install did not find in npm's cache", () => {
  it('names each package npm asked for, once, and nothing when npm missed none', () => {
    const stderr = [
      'npm error code ENOTCACHED',
      "npm error request to https://registry.npmjs.org/@a2a-js%2fsdk failed: cache mode is 'only-if-cached'",
      "npm error request to https://registry.npmjs.org/jose/-/jose-6.2.18.tgz failed: cache mode is 'only-if-cached'",
      "npm error request to https://registry.npmjs.org/@a2a-js%2fsdk failed: cache mode is 'only-if-cached'",
    ].join('\n');
    assert.equal(notCached(stderr), '@a2a-js/sdk, jose-6.2.18.tgz');
    assert.equal(notCached('npm error code ERESOLVE\nnpm error request to https://example.test/x failed'), '');
  });
});
