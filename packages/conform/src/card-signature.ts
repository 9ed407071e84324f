/**
 * Checking an agent card's signature (A2A 1.0 section 8.4) against keys the user gave: a JWKS
 * URL, or a file (a JWKS, one JWK, or a PEM public key). Never a key the card names itself
 * (`jku`, `x5u`, `jwk` in a signature's header): anyone who can change the card can change those.
 * The signed payload is the card's canonical JSON as the SDK computes it (`canonicalizeAgentCard`:
 * A2A 1.0's JSON form without `signatures`, default values left out, RFC 8785).
 */
import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { AgentCard, canonicalizeAgentCard } from '@a2a-js/sdk';
import { base64url, decodeProtectedHeader, flattenedVerify, importJWK, type JWK } from 'jose';

/** The keys a card may be signed with. */
export interface CardKeys {
  keys: JWK[];
  /** Where they came from, for messages. */
  source: string;
}

/** What a check of a card's signatures found: which key verified it, or why none did. */
export type CardSignatureCheck =
  { valid: true; kid: string; alg: string } | { valid: false; signed: boolean; why: string };

/** Algorithms a card's signature may use: asymmetric only (an HMAC key would have to be shared). */
const ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA'];

/** Reads `--card-key`: an http(s) URL of a JWKS, or a file; throws an Error saying what is wrong. */
export async function loadCardKeys(source: string, fetchImpl: typeof fetch = fetch): Promise<CardKeys> {
  if (/^https?:\/\//i.test(source)) {
    let response: Response;
    try {
      response = await fetchImpl(source, { signal: AbortSignal.timeout(15_000) });
    } catch (error) {
      throw new Error(`--card-key ${source}: the JWKS could not be fetched (${(error as Error).message}).`);
    }
    if (!response.ok) throw new Error(`--card-key ${source}: the JWKS could not be fetched (HTTP ${response.status}).`);
    return { keys: keysOf(await response.text(), source), source };
  }
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    throw new Error(`--card-key ${source}: ${code === 'ENOENT' ? 'no such file' : 'the file cannot be read'}.`);
  }
  return { keys: keysOf(text, source), source };
}

function keysOf(text: string, source: string): JWK[] {
  if (text.trimStart().startsWith('{')) {
    let value: { keys?: unknown; kty?: unknown };
    try {
      value = JSON.parse(text) as typeof value;
    } catch {
      throw new Error(`--card-key ${source}: not JSON, nor a PEM public key.`);
    }
    const keys = Array.isArray(value.keys)
      ? (value.keys as JWK[])
      : typeof value.kty === 'string'
        ? [value as JWK]
        : [];
    if (keys.length === 0) throw new Error(`--card-key ${source}: neither a JWKS ({"keys": [...]}) nor a JWK.`);
    // Only public halves are kept: a private key given by mistake verifies as its public one.
    return keys.map(({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicHalf }) => publicHalf);
  }
  try {
    return [exportJwkSync(text)];
  } catch {
    throw new Error(`--card-key ${source}: not a JWKS, a JWK or a PEM public key.`);
  }
}

/** A PEM public key, certificate or private key as its public JWK. */
function exportJwkSync(pem: string): JWK {
  const key = createPublicKey(pem);
  return key.export({ format: 'jwk' }) as JWK;
}

/**
 * Checks `card` (A2A 1.0 JSON, or the SDK's object: it is put in JSON form first) against
 * `keys`: valid when one of its signatures verifies with the key its `kid` names (or the only
 * key, when the keys have no ids).
 */
export async function checkCardSignature(card: unknown, keys: CardKeys): Promise<CardSignatureCheck> {
  const json = toJson(card);
  const signatures = Array.isArray(json['signatures']) ? (json['signatures'] as unknown[]) : [];
  if (signatures.length === 0) return { valid: false, signed: false, why: 'the card carries no signature' };
  let payload: string;
  try {
    payload = base64url.encode(new TextEncoder().encode(canonicalizeAgentCard(json as unknown as AgentCard)));
  } catch {
    return { valid: false, signed: true, why: 'the card is not an A2A 1.0 card, so it has no canonical form' };
  }
  const reasons: string[] = [];
  for (const [index, entry] of signatures.entries()) {
    const reason = await checkOne(entry, payload, keys);
    if (typeof reason !== 'string') return { valid: true, ...reason };
    reasons.push(signatures.length > 1 ? `signature ${index + 1}: ${reason}` : reason);
  }
  return { valid: false, signed: true, why: reasons.join('; ') };
}

/** The key and algorithm that verified `entry`, or why it does not verify. */
async function checkOne(
  entry: unknown,
  payload: string,
  keys: CardKeys,
): Promise<{ kid: string; alg: string } | string> {
  const { protected: protectedHeader, signature, header } = (entry ?? {}) as Record<string, unknown>;
  if (typeof protectedHeader !== 'string' || typeof signature !== 'string')
    return 'it lacks "protected" or "signature"';
  let parameters: Record<string, unknown>;
  try {
    parameters = decodeProtectedHeader({ protected: protectedHeader }) as Record<string, unknown>;
  } catch {
    return 'its protected header is not base64url-encoded JSON';
  }
  const alg = parameters['alg'];
  const kid = parameters['kid'] ?? (header as Record<string, unknown> | undefined)?.['kid'];
  if (typeof alg !== 'string' || !ALGORITHMS.includes(alg))
    return `its algorithm ${JSON.stringify(alg)} is not one a card may use`;
  const withId = keys.keys.filter((key) => key.kid !== undefined);
  const key =
    typeof kid === 'string' && withId.length > 0
      ? withId.find((candidate) => candidate.kid === kid)
      : keys.keys.length === 1
        ? keys.keys[0]
        : undefined;
  if (!key) {
    // The card may name where its key is; that is never where a key is taken from.
    const named = ['jku', 'x5u', 'jwk'].filter((name) => name in parameters);
    const note = named.length ? ` (the card names a key of its own in ${named.join(', ')}: not trusted)` : '';
    return `no key with kid ${JSON.stringify(kid)} in ${keys.source}${note}`;
  }
  let publicKey: Awaited<ReturnType<typeof importJWK>>;
  try {
    publicKey = await importJWK({ ...key, alg: key.alg ?? alg }, alg);
  } catch {
    return `the key ${JSON.stringify(kid)} in ${keys.source} is not a ${alg} key`;
  }
  try {
    await flattenedVerify(
      { payload, protected: protectedHeader, signature, ...(isObject(header) && { header }) },
      publicKey,
      { algorithms: [alg] },
    );
  } catch {
    return `it does not match the card: the card was changed after it was signed, or signed with another key than ${JSON.stringify(kid)}`;
  }
  return { kid: String(kid ?? ''), alg };
}

function toJson(card: unknown): Record<string, unknown> {
  if (!isObject(card)) return {};
  // The SDK's object holds its security schemes as `{scheme: {$case, value}}`: its JSON form first.
  const internal = Object.values((card['securitySchemes'] ?? {}) as object).some((s) => isObject(s) && 'scheme' in s);
  return internal ? (AgentCard.toJSON(card as unknown as AgentCard) as Record<string, unknown>) : card;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One line for a person: what the check found. */
export function describeCardSignature(check: CardSignatureCheck): string {
  return check.valid
    ? `the card's signature verifies (kid ${JSON.stringify(check.kid)}, ${check.alg})`
    : `the card's signature does not verify: ${check.why}`;
}
