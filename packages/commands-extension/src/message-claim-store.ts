import type { TaskStatusUpdateEvent } from '@a2a-js/sdk';

/** Whose message ids these are: message ids are chosen by clients, so each user has their own. */
export interface ClaimScope {
  tenant: string;
  owner: string;
}

/** One message's claim in a `MessageClaimStore`: whose, its id, and its content's digest. */
export interface ClaimKey {
  scope: ClaimScope;
  messageId: string;
  digest: string;
}

/** What a message went to, once the harness accepted it. */
export interface ClaimOutcome {
  /** The task the message went to (a new one, for a message without a task). */
  taskId: string;
  /** For a command message, its reply, to answer a resend with (CMD-13). */
  reply?: TaskStatusUpdateEvent;
}

/** What the store holds for one message (its id and content digest). */
export type StoredClaim =
  /** Nothing: a new message. `idReused`: the id came before with other content. */
  | { kind: 'new'; idReused: boolean }
  /** Handled: a resend gets `outcome`. */
  | { kind: 'accepted'; outcome: ClaimOutcome }
  /** Not accepted yet, and its request is still going on another instance sharing the store. */
  | { kind: 'pending' };

/**
 * The durable side of message claims (CMD-34): one record per user, message id and content
 * digest, so that two messages sent with one id each have their own, written before the
 * message is processed (or, by a store no other process shares, as it is accepted). Its
 * unique key is what makes a claim atomic across processes and restarts; `MessageClaims` adds
 * the in-process side. Records are kept for a retention time, then pruned.
 */
export interface MessageClaimStore {
  /**
   * Records a claim of the message (`messageId` with content digest `digest`), or, alone, only
   * checks it is free, unless an accepted one is stored: then returns that one and changes
   * nothing. An unaccepted record whose request is still going on another instance is
   * `pending`; one whose request is gone (cut short by a crash) is taken over.
   */
  claim(scope: ClaimScope, messageId: string, digest: string): Promise<StoredClaim>;
  /**
   * Records what the claimed message went to; from then on the claim answers resends. A store
   * no other process shares may record the claim only here.
   */
  accept(scope: ClaimScope, messageId: string, digest: string, outcome: ClaimOutcome): Promise<void>;
  /** Forgets an unaccepted claim: its message was refused before anything was stored. */
  release(scope: ClaimScope, messageId: string, digest: string): Promise<void>;
}

/** A claim store that lives as long as the process (tests, and embedding without a database). */
export class InMemoryMessageClaimStore implements MessageClaimStore {
  /** By user and id, then by digest: undefined until accepted. */
  private readonly claims = new Map<string, Map<string, ClaimOutcome | undefined>>();

  async claim(scope: ClaimScope, messageId: string, digest: string): Promise<StoredClaim> {
    const key = claimKey(scope, messageId);
    const byDigest = this.claims.get(key) ?? new Map<string, ClaimOutcome | undefined>();
    this.claims.set(key, byDigest);
    const outcome = byDigest.get(digest);
    if (outcome) return { kind: 'accepted', outcome: structuredClone(outcome) };
    byDigest.set(digest, undefined);
    return { kind: 'new', idReused: byDigest.size > 1 };
  }

  async accept(scope: ClaimScope, messageId: string, digest: string, outcome: ClaimOutcome): Promise<void> {
    const byDigest = this.claims.get(claimKey(scope, messageId));
    if (byDigest?.has(digest) && !byDigest.get(digest)) byDigest.set(digest, structuredClone(outcome));
  }

  async release(scope: ClaimScope, messageId: string, digest: string): Promise<void> {
    const key = claimKey(scope, messageId);
    const byDigest = this.claims.get(key);
    if (!byDigest || byDigest.get(digest)) return;
    byDigest.delete(digest);
    if (byDigest.size === 0) this.claims.delete(key);
  }
}

/** One string per user and message id, for maps. */
export function claimKey(scope: ClaimScope, messageId: string): string {
  return `${scope.tenant}\0${scope.owner}\0${messageId}`;
}
