import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  contentDigest,
  InMemoryMessageClaimStore,
  MessageClaims,
  type Claim,
  type FirstClaim,
} from '../../src/a2a/index.js';
import { callContext, message } from '../store/helpers.js';

/** MessageClaims: the in-process side of CMD-34, over a store that keeps claims across restarts. */

const alice = callContext('alice');
const hello = (messageId = 'm1', text = 'hello'): Message => message('t1', 'c1', Role.ROLE_USER, text, messageId);
/** A message without a task: where it goes is known only once it is accepted. */
const newTaskMessage = (): Message => ({ ...hello(), taskId: '' });

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

  it('CMD-34: the same id with other content is a new message, while the first is going and after; an unchanged resend of either gets its own outcome', async () => {
    const reused: string[] = [];
    const claims = new MessageClaims(new InMemoryMessageClaimStore(), { onReusedId: (id) => reused.push(id) });
    const mine = first(await claims.claim(hello(), alice));
    const other = first(await claims.claim(hello('m1', 'something else'), alice));
    await mine.accept({ taskId: 't1' });
    mine.finish();
    await other.accept({ taskId: 't2' });
    other.finish();
    const third = first(await claims.claim(hello('m1', 'a third text'), alice));
    await third.accept({ taskId: 't3' });
    third.finish();
    assert.deepEqual(reused, ['m1', 'm1'], 'each reuse of the id is reported (logged at debug level)');
    for (const [text, taskId] of [
      ['hello', 't1'],
      ['something else', 't2'],
      ['a third text', 't3'],
    ]) {
      const again = await claims.claim(hello('m1', text), alice);
      assert.equal(again.kind === 'repeat' && again.outcome.taskId, taskId, `"${text}" resent`);
    }
    assert.equal((await claims.claim(hello(), callContext('bob'))).kind, 'first', "bob's m1 is his own");
    assert.equal((await claims.claim(hello(), callContext('alice', 'acme'))).kind, 'first', "and so is a tenant's");
  });

  it('CMD-34: the task and the context as given are content: naming the task the first send made is another message', async () => {
    const claims = new MessageClaims(new InMemoryMessageClaimStore());
    const mine = first(await claims.claim(newTaskMessage(), alice));
    await mine.accept({ taskId: 't9' });
    mine.finish();
    assert.equal((await claims.claim({ ...newTaskMessage(), taskId: 't9' }, alice)).kind, 'first');
    assert.equal((await claims.claim({ ...newTaskMessage(), contextId: 'c2' }, alice)).kind, 'first');
    const again = await claims.claim(newTaskMessage(), alice);
    assert.equal(again.kind === 'repeat' && again.outcome.taskId, 't9', 'the unchanged resend still gets its task');
  });

  it('CMD-34: the content digest is the parts, task and context as given; empty part metadata and message metadata do not count', () => {
    const plain = hello();
    const stamped = { ...hello(), metadata: { attempt: 2 } };
    const bare = { ...hello(), parts: hello().parts.map((part) => ({ ...part, metadata: undefined })) };
    assert.equal(contentDigest(stamped), contentDigest(plain));
    assert.equal(contentDigest(bare as Message), contentDigest(plain));
    assert.notEqual(contentDigest(hello('m1', 'hello!')), contentDigest(plain));
    assert.notEqual(contentDigest({ ...plain, contextId: 'c2' }), contentDigest(plain));
    assert.notEqual(contentDigest({ ...plain, taskId: 't2' }), contentDigest(plain));
    assert.notEqual(contentDigest({ ...plain, taskId: '' }), contentDigest(plain));
  });
});

describe('MessageClaims with instances sharing the store', () => {
  it('CMD-13, CMD-34: a resend whose first send is still being handled on another instance is refused, saying to send it again', async () => {
    const store = new InMemoryMessageClaimStore();
    // What the store answers while another instance's request for the id is still going.
    store.claim = async () => ({ kind: 'pending' });
    const claims = new MessageClaims(store);
    await assert.rejects(
      claims.claim(hello(), alice),
      (error) =>
        error instanceof UnsupportedOperationError && /still being handled by another instance/.test(error.message),
    );
    // Nothing is left held here: once the other instance is done, the id is claimed afresh.
    store.claim = InMemoryMessageClaimStore.prototype.claim;
    assert.equal((await claims.claim(hello(), alice)).kind, 'first');
  });
});
