import { createHash } from 'node:crypto';
import { Part, type Message } from '@a2a-js/sdk';
import { resolveUserScope, type OwnerResolver, type ServerCallContext } from '@a2a-js/sdk/server';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  claimKey,
  type ClaimKey,
  type ClaimOutcome,
  type ClaimScope,
  type MessageClaimStore,
} from './message-claim-store.js';

/** The message is new for this user: process it, then `accept` or `release`. */
export interface FirstClaim {
  kind: 'first';
  /** The claim's record in the store: a write that records its outcome itself is given it (`CommandTaskPort.recordsClaims`). */
  key: ClaimKey;
  /**
   * The message was accepted (stored on its task): resends get `outcome` from now on. `recorded`:
   * the store has the outcome already (written with the task), so only resends waiting here are told.
   */
  accept(outcome: ClaimOutcome, recorded?: 'recorded'): Promise<void>;
  /** The message was refused before anything was stored: the id is free again. */
  release(): Promise<void>;
  /** The request that claimed the id is over (a turn's stream has ended); call it last, always. */
  finish(): void;
}

/** The message (its id and content) was handled before: answer with what it went to. */
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

/** What claiming a message gives: the first send of its id (run it), or a repeat (answer as before). */
export type Claim = FirstClaim | RepeatClaim;

/**
 * Makes sending a message idempotent, per user, for commands and turns alike (CMD-13, CMD-34):
 * a message is its `messageId` and its content (`contentDigest`). The first send is processed;
 * a resend (same id, same content) gets what the first went to. The same id with other content
 * is another message, processed as new: A2A lets clients reuse ids, and the official TCK does.
 * The check and the claim are one step: an in-process map makes concurrent sends of one message
 * wait for the first, and the store's unique key keeps the claim across restarts and processes.
 */
export class MessageClaims {
  /** Claims whose request is still going, by user, id and digest; each is removed when it finishes. */
  private readonly live = new Map<string, LiveClaim>();

  constructor(
    private readonly store: MessageClaimStore,
    private readonly options: {
      ownerOf?: OwnerResolver;
      /** Told when a message comes with an id this user already sent with other content. */
      onReusedId?: (messageId: string) => void;
    } = {},
  ) {}

  /** Claims the message for the caller; throws only when its first send is still going on another instance. */
  async claim(message: Message, context: ServerCallContext): Promise<Claim> {
    const scope: ClaimScope = {
      tenant: context.tenant ?? '',
      owner: (this.options.ownerOf ?? resolveUserScope)(context),
    };
    const digest = contentDigest(message);
    const key = `${claimKey(scope, message.messageId)}\0${digest}`;
    for (;;) {
      const live = this.live.get(key);
      if (live) {
        const outcome = await live.accepted;
        if (outcome) return { kind: 'repeat', outcome, inFlight: !live.finished, firstDone: live.done };
        continue; // the first send was refused: this one is processed in its place
      }
      const mine = new LiveClaim();
      this.live.set(key, mine);
      try {
        const stored = await this.store.claim(scope, message.messageId, digest);
        if (stored.kind === 'pending') throw stillGoing();
        if (stored.kind === 'new') {
          if (stored.idReused) this.options.onReusedId?.(message.messageId);
          return this.first(scope, message.messageId, digest, key, mine);
        }
        this.finish(key, mine, { outcome: stored.outcome });
        return { kind: 'repeat', outcome: stored.outcome, inFlight: false, firstDone: Promise.resolve() };
      } catch (error) {
        this.finish(key, mine, { error });
        throw error;
      }
    }
  }

  private first(scope: ClaimScope, messageId: string, digest: string, key: string, mine: LiveClaim): FirstClaim {
    return {
      kind: 'first',
      key: { scope, messageId, digest },
      accept: async (outcome, recorded) => {
        mine.settle({ outcome }); // waiting resends go on at once; the record follows
        if (!recorded) await this.store.accept(scope, messageId, digest, outcome);
      },
      release: async () => {
        if (mine.settled) return;
        // The record goes first: a resend waiting on `mine` then claims afresh, in the store too.
        try {
          await this.store.release(scope, messageId, digest);
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

  constructor() {
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
 * What makes two sends of one id the same message: its parts, and the task and context as the
 * client gave them (CMD-34), in the protocol's JSON form, which leaves out fields at their
 * defaults (so a part sent with `"metadata": {}` and one sent without are the same). The
 * message's own metadata is left out, so a client that stamps a retry count or a time on each
 * attempt still resends.
 */
export function contentDigest(message: Message): string {
  const parts = (message.parts ?? []).map((part) =>
    Part.toJSON({ ...part, metadata: isEmpty(part.metadata) ? undefined : part.metadata }),
  );
  const content = JSON.stringify([message.taskId ?? '', message.contextId ?? '', parts]);
  return createHash('sha256').update(content).digest('hex');
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
