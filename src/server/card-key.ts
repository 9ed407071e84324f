/**
 * The key that signs the agent card (issue 38, `card.signing`): a private key file, PEM or JWK,
 * ES256 (an EC P-256 key) or RS256 (an RSA key of 2048 bits or more). The file is looked at
 * again before each signature: when it changed (replaced, rewritten), the new key signs from then
 * on, without a restart. A file that cannot be read or is not such a key keeps the key before it.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { exportJWK, type JWK } from 'jose';
import { HarnessError } from '../errors.js';

/** The algorithms a card is signed with. */
export type CardSigningAlgorithm = 'ES256' | 'RS256';

export interface CardKeyOptions {
  /** The private key file, PEM (PKCS #8, SEC 1 or PKCS #1) or a JWK (JSON). */
  keyFile: string;
  /** The key's id, the JWS header's `kid` and the JWKS entry's; a JWK file's own `kid` decides over it. */
  kid: string;
}

/** One key as read: what signs, and the public half as a JWKS entry. */
export interface CardKey {
  kid: string;
  alg: CardSigningAlgorithm;
  privateKey: KeyObject;
  publicJwk: JWK;
}

/** The key file's key, read now; throws `config_invalid` saying what is wrong, never the key. */
export async function readCardKey(options: CardKeyOptions): Promise<CardKey> {
  let text: string;
  try {
    text = await readFile(options.keyFile, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : 'it cannot be read';
    throw new HarnessError('config_invalid', `card.signing.keyFile "${options.keyFile}": ${why}.`, { cause: error });
  }
  const jwk = text.trimStart().startsWith('{') ? parseJwk(text, options.keyFile) : undefined;
  let privateKey: KeyObject;
  try {
    privateKey = jwk ? createPrivateKey({ key: jwk as never, format: 'jwk' }) : createPrivateKey(text);
  } catch (error) {
    throw new HarnessError(
      'config_invalid',
      `card.signing.keyFile "${options.keyFile}" holds no private key Node can read (a PEM private key, or a JWK with "d").`,
      { cause: error },
    );
  }
  const alg = algorithmOf(privateKey, options.keyFile);
  const kid = typeof jwk?.kid === 'string' && jwk.kid !== '' ? jwk.kid : options.kid;
  const publicJwk = { ...(await exportJWK(createPublicKey(privateKey))), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

function parseJwk(text: string, file: string): JWK {
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as JWK;
  } catch {
    // Said below.
  }
  throw new HarnessError('config_invalid', `card.signing.keyFile "${file}" starts like JSON but is not a JWK object.`);
}

/** ES256 for an EC P-256 key, RS256 for an RSA one of 2048 bits or more; anything else is refused. */
function algorithmOf(key: KeyObject, file: string): CardSigningAlgorithm {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1') return 'ES256';
  if (key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048) return 'RS256';
  throw new HarnessError(
    'config_invalid',
    `card.signing.keyFile "${file}" must hold an EC P-256 key (ES256) or an RSA key of 2048 bits or more (RS256).`,
  );
}

/**
 * The signing key as the file holds it now: read at start (a bad file stops the start), then
 * read again whenever the file's identity, size or time of change differs from the last read.
 */
export class CardKeyFile {
  private key: CardKey | undefined;
  /** The key before the last change, still listed in the JWKS: a card signed just before a rotation still verifies. */
  private previous: CardKey | undefined;
  private seen = '';
  private reading: Promise<CardKey> | undefined;

  constructor(
    private readonly options: CardKeyOptions,
    /** Told when a changed file could not be read as a key (the key before it goes on signing). */
    private readonly onUnreadable: (error: unknown) => void = () => {},
  ) {}

  /** The key now; the first call reads the file and throws when it is not a usable key. */
  async current(): Promise<CardKey> {
    const fingerprint = await this.fingerprint();
    if (this.key && fingerprint === this.seen) return this.key;
    // One read at a time: the cards asked for meanwhile wait for it.
    this.reading ??= this.reload(fingerprint).finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** The public keys clients verify with: the current one, and the one before it when its id differs. */
  async publicKeys(): Promise<JWK[]> {
    const key = await this.current();
    return this.previous && this.previous.kid !== key.kid ? [key.publicJwk, this.previous.publicJwk] : [key.publicJwk];
  }

  private async reload(fingerprint: string): Promise<CardKey> {
    try {
      const key = await readCardKey(this.options);
      if (this.key && this.key.kid !== key.kid) this.previous = this.key;
      this.key = key;
    } catch (error) {
      if (!this.key) throw error;
      this.onUnreadable(error);
    }
    this.seen = fingerprint;
    return this.key;
  }

  private async fingerprint(): Promise<string> {
    try {
      const info = await stat(this.options.keyFile, { bigint: true });
      return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
    } catch {
      return 'missing';
    }
  }
}
