import type { TaskStatusUpdateEvent } from '@a2a-js/sdk';

/** Whose message ids these are: message ids are chosen by clients, so each user has their own. */
export interface ClaimScope {
  tenant: string;
  owner: string;
}

/** What a message went to, once the harness accepted it. */
export interface ClaimOutcome {
  /** The task the message went to (a new one, for a message without a task). */
  taskId: string;
  /** For a command message, its reply, to answer a resend with (CMD-13). */
  reply?: TaskStatusUpdateEvent;
}

/** A claim as stored: the content it was made with and, once accepted, its outcome. */
export interface StoredClaim {
  digest: string;
  outcome?: ClaimOutcome;
  /** Not accepted yet, and its request is still going on another instance sharing the store. */
  pending?: boolean;
}

/**
 * The durable side of message claims (CMD-34): one record per user and message id, written
 * before the message is processed (or, by a store no other process shares, as it is accepted).
 * Its unique key is what makes a claim atomic across processes and restarts; `MessageClaims`
 * adds the in-process side.
 */
export interface MessageClaimStore {
  /**
   * Records a claim of `messageId` with the content digest `digest` (or, alone, only checks it
   * is free), unless an accepted one is stored: then returns that one and changes nothing. An
   * unaccepted record whose request is still going on another instance is returned as
   * `pending`; one whose request is gone (cut short by a crash) is taken over.
   */
  claim(scope: ClaimScope, messageId: string, digest: string): Promise<StoredClaim | undefined>;
  /**
   * Records what the claimed message, with the content digest `digest`, went to; from then on
   * the claim answers resends. A store no other process shares may record the claim only here.
   */
  accept(scope: ClaimScope, messageId: string, digest: string, outcome: ClaimOutcome): Promise<void>;
  /** Forgets an unaccepted claim: its message was refused before anything was stored. */
  release(scope: ClaimScope, messageId: string): Promise<void>;
}

/** A claim store that lives as long as the process (tests, and embedding without a database). */
export class InMemoryMessageClaimStore implements MessageClaimStore {
  private readonly claims = new Map<string, StoredClaim>();

  async claim(scope: ClaimScope, messageId: string, digest: string): Promise<StoredClaim | undefined> {
    const key = claimKey(scope, messageId);
    const stored = this.claims.get(key);
    if (stored?.outcome) return structuredClone(stored);
    this.claims.set(key, { digest });
    return undefined;
  }

  async accept(scope: ClaimScope, messageId: string, _digest: string, outcome: ClaimOutcome): Promise<void> {
    const stored = this.claims.get(claimKey(scope, messageId));
    if (stored && !stored.outcome) stored.outcome = structuredClone(outcome);
  }

  async release(scope: ClaimScope, messageId: string): Promise<void> {
    const key = claimKey(scope, messageId);
    if (!this.claims.get(key)?.outcome) this.claims.delete(key);
  }
}

/** One string per user and message id, for maps. */
export function claimKey(scope: ClaimScope, messageId: string): string {
  return `${scope.tenant}\0${scope.owner}\0${messageId}`;
}
