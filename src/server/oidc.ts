/**
 * OpenID Connect tokens (`auth.oidc`, docs/security.md): a JWT is checked against the provider's
 * discovery document and keys, with `jose`. The keys are cached; a token signed with a key id
 * not seen has them read again, at most once per `keysRefetchIntervalMs`, so a rotation needs no
 * restart and a flood of forged key ids cannot make the harness hammer the provider.
 */
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from 'jose';
import { HarnessError } from '../errors.js';

/** What the verifier needs of `auth.oidc` (config/auth.ts, whose output this is). */
export interface OidcOptions {
  issuer: string;
  audience: string | string[];
  algorithms: string[];
  userClaim: string;
  tenantClaim?: string;
  clockSkewSeconds: number;
  keysRefetchIntervalMs: number;
}

/** Who a valid token stands for: the user (`tenant/user` with a tenant claim) and the scopes it grants. */
export interface OidcIdentity {
  userName: string;
  scopes: ReadonlySet<string>;
}

/** A claim's value the user name takes: short enough to log and store, never empty. */
const MAX_CLAIM_CHARS = 256;

/** A compact JWS: three base64url parts. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function looksLikeJwt(token: string): boolean {
  return JWT_SHAPE.test(token);
}

/** The discovery document's path under the issuer (OpenID Connect Discovery 1.0, section 4). */
export const DISCOVERY_PATH = '/.well-known/openid-configuration';

export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}${DISCOVERY_PATH}`;
}

type KeySet = ReturnType<typeof createRemoteJWKSet>;

export class OidcVerifier {
  private keys: Promise<KeySet> | undefined;
  /** When reading the provider last failed: no new attempt before the interval has passed. */
  private failedAt = -Infinity;

  constructor(
    private readonly config: OidcOptions,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  /** The identity `token` stands for; throws `token_invalid` naming why, or `identity_unavailable`. */
  async verify(token: string): Promise<OidcIdentity> {
    const keys = await this.keySet();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: this.config.algorithms,
        clockTolerance: this.config.clockSkewSeconds,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw refusalOf(error);
    }
    return { userName: this.userNameOf(payload), scopes: scopesOf(payload) };
  }

  /** Reads the discovery document now, so the first call does not wait for it; a failure is retried on use. */
  async warmUp(): Promise<void> {
    await this.keySet();
  }

  private userNameOf(payload: JWTPayload): string {
    const user = claimText(payload, this.config.userClaim);
    const tenantClaim = this.config.tenantClaim;
    if (tenantClaim === undefined) return user;
    const tenant = claimText(payload, tenantClaim);
    // The user name is `tenant/user`: a tenant holding a slash could pass for another one's user.
    if (tenant.includes('/')) throw invalid(`The token's "${tenantClaim}" claim holds a "/".`);
    return `${tenant}/${user}`;
  }

  /** The provider's key set, from the `jwks_uri` its discovery document names, read once. */
  private keySet(): Promise<KeySet> {
    if (this.keys) return this.keys;
    if (Date.now() < this.failedAt + this.config.keysRefetchIntervalMs) return Promise.reject(unavailable());
    this.keys = this.discover().catch((error: unknown) => {
      this.keys = undefined;
      this.failedAt = Date.now();
      throw unavailable(error);
    });
    return this.keys;
  }

  private async discover(): Promise<KeySet> {
    const response = await this.fetchImpl(discoveryUrl(this.config.issuer), {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(5000),
    });
    if (response.status !== 200) throw new Error(`the discovery document answered ${response.status}`);
    const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery 1.0, section 4.3: the document's issuer is exactly the one asked for.
    if (document.issuer !== this.config.issuer) throw new Error('the discovery document names another issuer');
    if (typeof document.jwks_uri !== 'string' || !URL.canParse(document.jwks_uri))
      throw new Error('the discovery document names no jwks_uri');
    const jwksUri = new URL(document.jwks_uri);
    // Plain http only where the issuer itself is (a loopback test issuer): the keys decide who may call.
    if (jwksUri.protocol !== 'https:' && !(jwksUri.protocol === 'http:' && this.config.issuer.startsWith('http:')))
      throw new Error('the discovery document names a jwks_uri that is not https');
    return createRemoteJWKSet(jwksUri, {
      cooldownDuration: this.config.keysRefetchIntervalMs,
      [customFetch]: this.boundedFetch(),
    });
  }

  /**
   * `jose` reads the keys again on an unknown key id only once per cooldown after a read that
   * worked; this bounds the reads that fail too (the provider down), which it would repeat for
   * every token.
   */
  private boundedFetch(): typeof fetch {
    let failedAt = -Infinity;
    return async (input, init) => {
      if (Date.now() < failedAt + this.config.keysRefetchIntervalMs) throw unavailable();
      try {
        const response = await this.fetchImpl(input, init);
        if (response.status !== 200) failedAt = Date.now();
        return response;
      } catch (error) {
        failedAt = Date.now();
        throw error;
      }
    };
  }
}

function claimText(payload: JWTPayload, claim: string): string {
  const value = payload[claim];
  if (typeof value !== 'string' || value === '') throw invalid(`The token has no "${claim}" claim.`);
  if (value.length > MAX_CLAIM_CHARS) throw invalid(`The token's "${claim}" claim is too long.`);
  return value;
}

/** The scopes of `scope` (a space-separated string, RFC 8693) or `scp` (a list, as Azure and Okta write it). */
function scopesOf(payload: JWTPayload): ReadonlySet<string> {
  const scopes = new Set<string>();
  if (typeof payload.scope === 'string') for (const scope of payload.scope.split(' ')) if (scope) scopes.add(scope);
  const scp = payload.scp;
  const listed = Array.isArray(scp) ? scp : typeof scp === 'string' ? scp.split(' ') : [];
  for (const scope of listed) if (typeof scope === 'string' && scope) scopes.add(scope);
  return scopes;
}

function invalid(reason: string): HarnessError {
  return new HarnessError('token_invalid', reason);
}

function unavailable(cause?: unknown): HarnessError {
  return new HarnessError(
    'identity_unavailable',
    'The identity provider cannot be reached to check the token; try again shortly.',
    cause === undefined ? undefined : { cause },
  );
}

/** Why `jose` refused a token, in words a client may read (never the token, never the key). */
function refusalOf(error: unknown): HarnessError {
  if (error instanceof HarnessError) return error;
  if (error instanceof errors.JWTExpired) return invalid('The token has expired.');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return invalid('The token is for another audience.');
    if (error.claim === 'iss') return invalid('The token is from another issuer.');
    if (error.claim === 'nbf') return invalid('The token is not valid yet.');
    return invalid(`The token's "${error.claim}" claim is missing or wrong.`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return invalid('The token is badly signed.');
  if (error instanceof errors.JOSEAlgNotAllowed) return invalid('The token is signed with an algorithm not accepted.');
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return invalid('The token is signed with a key the issuer does not publish.');
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return unavailable(error);
  if (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC') return unavailable(error);
  if (error instanceof errors.JOSEError) return invalid('The token is malformed.');
  // A failed read of the keys (the provider down): not the token's fault.
  return unavailable(error);
}
