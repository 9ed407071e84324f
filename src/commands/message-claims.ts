import { createHash } from 'node:crypto';
import { Part, type Message } from '@a2a-js/sdk';
import { resolveUserScope, type OwnerResolver, type ServerCallContext } from '@a2a-js/sdk/server';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { claimKey, type ClaimOutcome, type ClaimScope, type MessageClaimStore } from './message-claim-store.js';

/** The message id is new for this user: process the message, then `accept` or `release`. */
export interface FirstClaim {
  kind: 'first';
  /** The message was accepted (stored on its task): resends get `outcome` from now on. */
  accept(outcome: ClaimOutcome): Promise<void>;
  /** The message was refused before anything was stored: the id is free again. */
  release(): Promise<void>;
  /** The request that claimed the id is over (a turn's stream has ended); call it last, always. */
  finish(): void;
}

/** The message id was handled before, with the same content: answer with what it went to. */
export interface RepeatClaim {
  kind: 'repeat';
  outcome: ClaimOutcome;
  /** The request that first sent it is still going (its turn may be running). */
  inFlight: boolean;
  /**
   * Resolves when that request is over. A turn's events reach listeners before the first
   * request has stored them: once this resolves, the task as stored is the turn's end.
   */
  firstDone: Promise<void>;
}

export type Claim = FirstClaim | RepeatClaim;

/**
 * Makes sending a message idempotent by its `messageId`, per user, for commands and turns alike
 * (CMD-13, CMD-34): the first send of an id is processed, a resend with the same content gets
 * what the first went to, and a resend with other content is refused. The check and the claim
 * are one step: an in-process map makes concurrent sends of one id wait for the first, and the
 * store's unique key keeps the claim across restarts (and, later, across processes).
 */
export class MessageClaims {
  /** Claims whose request is still going, by user and id; each is removed when it finishes. */
  private readonly live = new Map<string, LiveClaim>();

  constructor(
    private readonly store: MessageClaimStore,
    private readonly ownerOf: OwnerResolver = resolveUserScope,
  ) {}

  /** Claims the message's id for the caller; throws the protocol's invalid-params error on a conflict. */
  async claim(message: Message, context: ServerCallContext): Promise<Claim> {
    const scope: ClaimScope = { tenant: context.tenant ?? '', owner: this.ownerOf(context) };
    const digest = contentDigest(message);
    const key = claimKey(scope, message.messageId);
    for (;;) {
      const live = this.live.get(key);
      if (live) {
        if (live.digest !== digest) throw conflict();
        const outcome = await live.accepted;
        if (outcome)
          return {
            kind: 'repeat',
            outcome: sameTask(message, outcome),
            inFlight: !live.finished,
            firstDone: live.done,
          };
        continue; // the first send was refused: this one is processed in its place
      }
      const mine = new LiveClaim(digest);
      this.live.set(key, mine);
      try {
        const stored = await this.store.claim(scope, message.messageId, digest);
        if (stored?.pending) throw stored.digest === digest ? stillGoing() : conflict();
        if (!stored?.outcome) return this.first(scope, message.messageId, key, mine);
        // Handled by an earlier process: '' is a claim recorded before digests were kept.
        if (stored.digest !== digest && stored.digest !== '') throw conflict();
        this.finish(key, mine, { outcome: stored.outcome });
        return {
          kind: 'repeat',
          outcome: sameTask(message, stored.outcome),
          inFlight: false,
          firstDone: Promise.resolve(),
        };
      } catch (error) {
        this.finish(key, mine, { error });
        throw error;
      }
    }
  }

  private first(scope: ClaimScope, messageId: string, key: string, mine: LiveClaim): FirstClaim {
    return {
      kind: 'first',
      accept: async (outcome) => {
        mine.settle({ outcome }); // waiting resends go on at once; the record follows
        await this.store.accept(scope, messageId, mine.digest, outcome);
      },
      release: async () => {
        if (mine.settled) return;
        // The record goes first: a resend waiting on `mine` then claims afresh, in the store too.
        try {
          await this.store.release(scope, messageId);
        } finally {
          this.finish(key, mine, {});
        }
      },
      finish: () => this.finish(key, mine, {}),
    };
  }

  /** Ends a live claim; what it settles to, unless settled already, is what waiting resends get. */
  private finish(key: string, live: LiveClaim, result: Settlement): void {
    live.markFinished();
    if (this.live.get(key) === live) this.live.delete(key);
    live.settle(result);
  }
}

/** A claim whose request is going: resends of its id wait on `accepted`. */
class LiveClaim {
  finished = false;
  settled = false;
  /** Resolves when the request that made the claim is over. */
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  /** What the message went to; undefined when it was refused (the id is free again). */
  readonly accepted: Promise<ClaimOutcome | undefined>;
  private resolve!: (outcome: ClaimOutcome | undefined) => void;
  private reject!: (error: unknown) => void;

  constructor(readonly digest: string) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.accepted = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.accepted.catch(() => undefined); // only waiting resends care, and they await it
  }

  markFinished(): void {
    this.finished = true;
    this.resolveDone();
  }

  settle(result: Settlement): void {
    if (this.settled) return;
    this.settled = true;
    if ('error' in result) this.reject(result.error);
    else this.resolve(result.outcome);
  }
}

/** How a live claim ends for its waiters: an outcome, nothing (the id is free again), or an error. */
type Settlement = { outcome?: ClaimOutcome } | { error: unknown };

/**
 * What makes two sends "the same message": its context and its parts (the task is checked
 * against where the first went, by `sameTask`),
 * in the protocol's JSON form, which leaves out fields at their defaults (so a part sent with
 * `"metadata": {}` and one sent without are the same). The message's own metadata is left out,
 * so a client that stamps a retry count or a time on each attempt is not refused.
 */
export function contentDigest(message: Message): string {
  const parts = (message.parts ?? []).map((part) =>
    Part.toJSON({ ...part, metadata: isEmpty(part.metadata) ? undefined : part.metadata }),
  );
  const content = JSON.stringify([message.contextId ?? '', parts]);
  return createHash('sha256').update(content).digest('hex');
}

/**
 * A resend may name the task its first send went to, which a client learns only from the first
 * answer (a first send without a task made one); naming another task is other content.
 */
function sameTask(resend: Message, outcome: ClaimOutcome): ClaimOutcome {
  if (resend.taskId && resend.taskId !== outcome.taskId) throw conflict();
  return outcome;
}

function isEmpty(value: object | undefined): boolean {
  return value === undefined || Object.keys(value).length === 0;
}

/** A resend that reached another instance while the first send is still being handled there. */
function stillGoing(): UnsupportedOperationError {
  return new UnsupportedOperationError(
    'This message is still being handled by another instance of the server. Send it again, unchanged, in a moment to get its answer.',
  );
}

function conflict(): RequestMalformedError {
  return new RequestMalformedError(
    'This messageId was already used for a message with other content. Give every new message its own messageId; resend a message only unchanged.',
  );
}
