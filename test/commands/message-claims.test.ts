import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message } from '@a2a-js/sdk';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  contentDigest,
  InMemoryMessageClaimStore,
  MessageClaims,
  type Claim,
  type FirstClaim,
} from '../../src/commands/index.js';
import { callContext, message } from '../store/helpers.js';

/** MessageClaims: the in-process side of CMD-34, over a store that keeps claims across restarts. */

const alice = callContext('alice');
const hello = (messageId = 'm1', text = 'hello'): Message => message('t1', 'c1', Role.ROLE_USER, text, messageId);
/** A message without a task: where it goes is known only once it is accepted. */
const newTaskMessage = (): Message => ({ ...hello(), taskId: '' });
const conflict = (error: unknown) => error instanceof RequestMalformedError && /already used/.test(error.message);

function first(claim: Claim): FirstClaim {
  assert.equal(claim.kind, 'first');
  return claim as FirstClaim;
}

describe('MessageClaims', () => {
  it('CMD-34: of concurrent claims of one id, one is first; the others get its outcome once accepted, and know when it is over', async () => {
    const claims = new MessageClaims(new InMemoryMessageClaimStore());
    const all = Array.from({ length: 10 }, () => claims.claim(hello(), alice));
    const mine = first(await all[0]!);
    await mine.accept({ taskId: 't1' });
    const others = await Promise.all(all.slice(1));
    let over = false;
    for (const other of others) {
      assert.equal(other.kind, 'repeat');
      if (other.kind !== 'repeat') continue;
      assert.deepEqual(other.outcome, { taskId: 't1' });
      assert.equal(other.inFlight, true);
      void other.firstDone.then(() => (over = true));
    }
    await Promise.resolve();
    assert.equal(over, false, 'the first request is not over yet');
    mine.finish();
    await Promise.all(others.flatMap((other) => (other.kind === 'repeat' ? [other.firstDone] : [])));
    const later = await claims.claim(hello(), alice);
    assert.deepEqual(
      later.kind === 'repeat' && [later.outcome, later.inFlight],
      [{ taskId: 't1' }, false],
      'from the store once the first is over',
    );
  });

  it('CMD-34: a claim released (its message refused) lets a waiting resend go first in its place', async () => {
    const claims = new MessageClaims(new InMemoryMessageClaimStore());
    const mine = first(await claims.claim(newTaskMessage(), alice));
    const waiting = claims.claim(newTaskMessage(), alice);
    await mine.release();
    mine.finish();
    const next = first(await waiting);
    await next.accept({ taskId: 't2' });
    next.finish();
    const again = await claims.claim(newTaskMessage(), alice);
    assert.equal(again.kind === 'repeat' && again.outcome.taskId, 't2');
  });

  it('CMD-34: a resend may name the task its first send made, and no other', async () => {
    const claims = new MessageClaims(new InMemoryMessageClaimStore());
    const mine = first(await claims.claim(newTaskMessage(), alice));
    await mine.accept({ taskId: 't9' });
    mine.finish();
    const named = await claims.claim({ ...newTaskMessage(), taskId: 't9' }, alice);
    assert.equal(named.kind === 'repeat' && named.outcome.taskId, 't9');
    await assert.rejects(claims.claim({ ...newTaskMessage(), taskId: 't8' }, alice), conflict);
  });

  it('CMD-34: other content under a known id is refused, while the first is going and after', async () => {
    const claims = new MessageClaims(new InMemoryMessageClaimStore());
    const mine = first(await claims.claim(hello(), alice));
    await assert.rejects(claims.claim(hello('m1', 'something else'), alice), conflict);
    await mine.accept({ taskId: 't1' });
    mine.finish();
    await assert.rejects(claims.claim(hello('m1', 'something else'), alice), conflict);
    await assert.rejects(claims.claim({ ...hello(), taskId: 't9' }, alice), conflict, 'another task is other content');
    assert.equal((await claims.claim(hello(), callContext('bob'))).kind, 'first', "bob's m1 is his own");
    assert.equal((await claims.claim(hello(), callContext('alice', 'acme'))).kind, 'first', "and so is a tenant's");
  });

  it('the content digest ignores what does not change the message: empty part metadata, message metadata', () => {
    const plain = hello();
    const stamped = { ...hello(), metadata: { attempt: 2 } };
    const bare = { ...hello(), parts: hello().parts.map((part) => ({ ...part, metadata: undefined })) };
    assert.equal(contentDigest(stamped), contentDigest(plain));
    assert.equal(contentDigest(bare as Message), contentDigest(plain));
    assert.notEqual(contentDigest(hello('m1', 'hello!')), contentDigest(plain));
    assert.notEqual(contentDigest({ ...plain, contextId: 'c2' }), contentDigest(plain));
  });
});

describe('MessageClaims with instances sharing the store', () => {
  it('CMD-13, CMD-34: a resend whose first send is still being handled on another instance is refused, saying to send it again; other content is a conflict', async () => {
    const store = new InMemoryMessageClaimStore();
    // What the store answers while another instance's request for the id is still going.
    store.claim = async () => ({ digest: contentDigest(hello()), pending: true });
    const claims = new MessageClaims(store);
    await assert.rejects(
      claims.claim(hello(), alice),
      (error) =>
        error instanceof UnsupportedOperationError && /still being handled by another instance/.test(error.message),
    );
    await assert.rejects(claims.claim(hello('m1', 'other text'), alice), conflict);
    // Nothing is left held here: once the other instance is done, the id is claimed afresh.
    store.claim = InMemoryMessageClaimStore.prototype.claim;
    assert.equal((await claims.claim(hello(), alice)).kind, 'first');
  });
});
