/**
 * Signed cards (issue 38, A2A 1.0 section 8.4): every card served, the public one and the
 * extended one, carries in `signatures` a JWS (flattened JSON, detached payload) over its
 * canonical JSON: the card without `signatures`, in A2A 1.0's JSON form, default values left out,
 * serialised by RFC 8785 (JCS). The canonical form is the SDK's `canonicalizeAgentCard`, which
 * every `@a2a-js/sdk` verifier computes too. The public keys are served as a JWKS at
 * {@link JWKS_PATH}.
 */
import { canonicalizeAgentCard, type AgentCard } from '@a2a-js/sdk';
import { FlattenedSign, type JWK } from 'jose';
import type { Step } from '../a2a/index.js';
import { cardJson } from './card.js';
import { describeError, type Logger } from '../log.js';
import { CardKeyFile, type CardKey, type CardKeyOptions } from './card-key.js';

/** Where the JWKS of the card's signing keys is served. */
export const JWKS_PATH = '/.well-known/jwks.json';

type CardSignature = AgentCard['signatures'][number];

/** How many signatures are kept for cards that did not change: the public and the extended card, and a few more. */
const REMEMBERED = 8;

export class CardSigner {
  /**
   * The latest signatures by key and payload: an ES256 signature differs on every signing, and
   * the card route's ETag (and a client's 304) needs the same bytes for the same card.
   */
  private remembered: Array<{ key: CardKey; payload: string; signature: CardSignature }> = [];

  constructor(private readonly keyFile: CardKeyFile) {}

  /** `json` (the card in A2A 1.0's JSON form) with its one signature, by the key the file holds now. */
  async signJson(json: AgentCard): Promise<AgentCard> {
    const key = await this.keyFile.current();
    const payload = canonicalizeAgentCard(json);
    return { ...json, signatures: [await this.signatureOf(key, payload)] };
  }

  /** `card` in the SDK's own shape, signed as its JSON form is (for the bindings, which encode it themselves). */
  async sign(card: AgentCard): Promise<AgentCard> {
    const signed = await this.signJson(cardJson(card));
    return { ...card, signatures: signed.signatures };
  }

  /** The JWKS clients verify the card with (RFC 7517): the current key, and the one before a rotation. */
  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: await this.keyFile.publicKeys() };
  }

  private async signatureOf(key: CardKey, payload: string): Promise<CardSignature> {
    const known = this.remembered.find((entry) => entry.key === key && entry.payload === payload);
    if (known) return known.signature;
    const jws = await new FlattenedSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JOSE' })
      .sign(key.privateKey);
    const signature: CardSignature = { protected: jws.protected!, signature: jws.signature, header: undefined };
    this.remembered = [{ key, payload, signature }, ...this.remembered.slice(0, REMEMBERED - 1)];
    return signature;
  }
}

/**
 * The `cardSignatures` step: the extended card leaves signed, once the steps below it (the
 * commands) have added their entries. Without a signer, cards leave unsigned.
 */
export function cardSignaturesStep(signer: CardSigner | undefined): Step {
  return {
    name: 'cardSignatures',
    methods: ['getAuthenticatedExtendedAgentCard'],
    around: (call, next) => (signer ? (next() as Promise<AgentCard>).then((card) => signer.sign(card)) : next()),
  };
}

/**
 * The signer `card.signing` asks for, its key read once now so that a bad key file stops the
 * start; none without it. A key file changed later into something unusable is logged, and the
 * key before it goes on signing.
 */
export async function startCardSigner(
  signing: CardKeyOptions | undefined,
  log: Logger,
): Promise<CardSigner | undefined> {
  if (!signing) return undefined;
  const keyFile = new CardKeyFile(signing, (error) =>
    log.error('the card signing key file changed and cannot be read as a key; the key before it still signs', {
      error: describeError(error),
    }),
  );
  const key = await keyFile.current();
  log.info('cards are signed', { kid: key.kid, alg: key.alg, jwks: JWKS_PATH });
  return new CardSigner(keyFile);
}
