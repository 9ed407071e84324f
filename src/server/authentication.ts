/**
 * The one check of a caller's bearer token, for all three bindings: the tokens file
 * (`TokenAuthenticator`), then, for a JWT, OpenID Connect (`OidcVerifier`); and the scopes a
 * call's method needs. Its refusals are harness errors with RFC 6750's words for the
 * `WWW-Authenticate` header ({@link wwwAuthenticate}); gRPC sends their messages.
 */
import type { User } from '@a2a-js/sdk/server';
import type { CallMethod } from '../a2a/index.js';
import { HarnessError } from '../errors.js';
import { A2A_METHODS } from '../telemetry/metrics.js';
import { describeError, type Logger } from '../log.js';
import { AuthenticatedUser, bearerToken, TokenAuthenticator, UNAUTHENTICATED_MESSAGE } from './auth.js';
import { looksLikeJwt, type OidcOptions, OidcVerifier } from './oidc.js';

/** `auth.oidc` as the authenticator takes it: the verifier's options and the scopes calls need. */
export interface OidcAuthOptions extends OidcOptions {
  requiredScopes?: string[];
  methodScopes?: Partial<Record<string, string[]>>;
}

export type Authentication = { user: AuthenticatedUser } | { refusal: HarnessError };

const REALM = 'tiny-harness';

/** The description of a token neither the file nor the provider knows (RFC 6750's invalid_token). */
const UNKNOWN_TOKEN =
  'Authentication required: the token is not one this server knows; send "Authorization: Bearer <token>" with one it knows.';

export class Authenticator {
  private readonly oidc?: OidcVerifier;

  constructor(
    private readonly tokens: TokenAuthenticator | undefined,
    private readonly oidcOptions?: OidcAuthOptions,
    fetchImpl?: typeof fetch,
    /** Told when the provider cannot be read (at most once per attempt, so once per interval). */
    private readonly log?: Logger,
  ) {
    if (!tokens && !oidcOptions) throw new Error('Authenticator needs tokens, OpenID Connect, or both.');
    if (oidcOptions) this.oidc = new OidcVerifier(oidcOptions, fetchImpl);
  }

  /** The issuer whose tokens are accepted, when OpenID Connect is on. */
  get issuer(): string | undefined {
    return this.oidcOptions?.issuer;
  }

  /** The user names of the tokens file (for the start-up log; never the tokens). */
  fileUsers(): string[] {
    return this.tokens?.users() ?? [];
  }

  /**
   * The user an `Authorization` header value stands for, or the refusal: no bearer token
   * (`unauthenticated`), a token the file does not hold and that is no JWT the provider signed
   * (`token_invalid`, naming why), or the provider out of reach (`identity_unavailable`).
   */
  async authenticate(header: string | string[] | undefined): Promise<Authentication> {
    const token = bearerToken(header);
    if (token === undefined) return { refusal: new HarnessError('unauthenticated', UNAUTHENTICATED_MESSAGE) };
    const listed = this.tokens?.authenticate(header);
    if (listed) return { user: listed };
    if (!this.oidc || !looksLikeJwt(token)) return { refusal: new HarnessError('token_invalid', UNKNOWN_TOKEN) };
    try {
      const identity = await this.oidc.verify(token);
      return { user: new AuthenticatedUser(identity.userName, identity.scopes) };
    } catch (error) {
      if (!(error instanceof HarnessError)) throw error;
      // A failed read of the provider carries its cause; a refusal within the interval after one does not.
      if (error.code === 'identity_unavailable' && error.cause !== undefined)
        this.log?.warn('the identity provider cannot be read; tokens are refused with 503 until it can', {
          issuer: this.oidcOptions?.issuer,
          error: describeError(error.cause),
        });
      return { refusal: error };
    }
  }

  /**
   * The refusal of a call of `method` by `user` whose token lacks a scope it needs
   * (`requiredScopes`, then the method's own); none for a user of the tokens file, who has no scopes.
   */
  scopeRefusal(user: User, method: CallMethod): HarnessError | undefined {
    if (!(user instanceof AuthenticatedUser) || user.scopes === undefined) return undefined;
    const name = A2A_METHODS[method];
    const needed = [...(this.oidcOptions?.requiredScopes ?? []), ...(this.oidcOptions?.methodScopes?.[name] ?? [])];
    const missing = needed.filter((scope) => !user.scopes!.has(scope));
    if (missing.length === 0) return undefined;
    return new HarnessError(
      'scope_insufficient',
      `${name} needs the scope ${missing.map((s) => `"${s}"`).join(', ')}.`,
      {
        metadata: { scope: needed.join(' ') },
      },
    );
  }

  /** Reads the provider's discovery document ahead of the first call; a failure is only logged by the caller. */
  async warmUp(): Promise<void> {
    await this.oidc?.warmUp();
  }
}

/**
 * The check of callers' tokens, when any is configured: the tokens file's, OpenID Connect's
 * (`auth.oidc`), or both. The provider's discovery document is read now, in the background: a
 * failure is logged, and tried again on the first call.
 */
export function authenticatorOf(
  tokens: ReadonlyMap<string, string> | undefined,
  oidc: OidcAuthOptions | undefined,
  log: Logger,
): Authenticator | undefined {
  const file = tokens?.size ? new TokenAuthenticator(tokens) : undefined;
  if (!file && !oidc) return undefined;
  const authenticator = new Authenticator(file, oidc, undefined, log);
  authenticator
    .warmUp()
    .catch(() =>
      log.warn('the identity provider cannot be reached yet; tokens are checked once it can', { issuer: oidc?.issuer }),
    );
  return authenticator;
}

/** The `WWW-Authenticate` value of a 401 or 403 (RFC 6750, section 3), the reason quoted without the token. */
export function wwwAuthenticate(refusal: HarnessError): string {
  const quoted = (text: string) => `"${text.replace(/["\\]/g, "'")}"`;
  if (refusal.code === 'token_invalid')
    return `Bearer realm="${REALM}", error="invalid_token", error_description=${quoted(refusal.message)}`;
  if (refusal.code === 'scope_insufficient')
    return `Bearer realm="${REALM}", error="insufficient_scope", error_description=${quoted(refusal.message)}, scope=${quoted(refusal.metadata?.scope ?? '')}`;
  return `Bearer realm="${REALM}"`;
}
