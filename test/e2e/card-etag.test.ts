/**
 * The agent card carries an ETag (a hash of the JSON served) and answers `If-None-Match` with
 * 304 and no body, so that a client that reads it again while it waits costs almost nothing;
 * a command file added changes the card, and so its ETag (CMD-16).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestHarness, type TestHarness } from './support.js';
import { poll } from '../support/wait.js';

let h: TestHarness;
let dir: string;

function card(etag?: string): Promise<Response> {
  return fetch(`${h.harness.url}/.well-known/agent-card.json`, {
    headers: etag ? { 'If-None-Match': etag } : {},
  });
}

describe('the agent card ETag', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tiny-harness-card-'));
    h = await startTestHarness({ harness: { commandsDir: dir } });
  });

  after(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is sent with the card, and If-None-Match with it is answered 304 with no body', async () => {
    const first = await card();
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag');
    assert.ok(etag, 'an ETag');
    await first.json();
    assert.equal((await card()).headers.get('etag'), etag, 'the same card, the same ETag');
    const again = await card(etag);
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    assert.equal((await card('W/"something-else"')).status, 200, 'another ETag gets the card');
  });

  it('CMD-16: a command file added changes the card and its ETag', async () => {
    const before = await card();
    const etag = before.headers.get('etag')!;
    await before.body?.cancel();
    writeFileSync(join(dir, 'review.md'), '---\ndescription: Review a file\n---\nReview $ARGUMENTS\n');
    let changed: Response | undefined;
    await poll('the card to change', async () => {
      const response = await card(etag);
      if (response.status === 304) return false;
      changed = response;
      return true;
    });
    assert.equal(changed!.status, 200);
    assert.notEqual(changed!.headers.get('etag'), etag);
    assert.match(await changed!.text(), /"review"/);
  });
});
