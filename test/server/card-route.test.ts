/** The card's ETag comparison: `If-None-Match` as RFC 9110 reads it for a GET. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cardEtag, matchesEtag } from '../../src/server/card-route.js';

describe('the agent card ETag', () => {
  it('is a strong tag of the body, the same for the same bytes and another for others', () => {
    assert.match(cardEtag('{}'), /^"[\w-]{22}"$/);
    assert.equal(cardEtag('{"a":1}'), cardEtag('{"a":1}'));
    assert.notEqual(cardEtag('{"a":1}'), cardEtag('{"a":2}'));
  });

  it('If-None-Match matches its tag, weakly, in a list, or as *; nothing else', () => {
    const tag = cardEtag('{}');
    assert.equal(matchesEtag(tag, tag), true);
    assert.equal(matchesEtag(`W/${tag}`, tag), true, 'weak comparison');
    assert.equal(matchesEtag(`"other", ${tag}`, tag), true);
    assert.equal(matchesEtag('*', tag), true);
    assert.equal(matchesEtag('"other"', tag), false);
    assert.equal(matchesEtag(undefined, tag), false);
    assert.equal(matchesEtag('', tag), false);
  });
});
