import { createHash, timingSafeEqual } from 'node:crypto';
import type { User } from '@a2a-js/sdk/server';
import type { Logger } from '../log.js';
import { isLoopback } from './listen.js';

/**
 * A caller who presented a valid bearer token; tasks are stored under `userName`. An OpenID
 * Connect token's user has the scopes it grants; a tokens file's user has none to check.
 */
export class AuthenticatedUser implements User {
  constructor(
    readonly userName: string,
    readonly scopes?: ReadonlySet<string>,
  ) {}

  get isAuthenticated(): boolean {
    return true;
  }
}

/** What a refused request is told (never which part was wrong, never the token). */
export const UNAUTHENTICATED_MESSAGE =
  'Authentication required: send "Authorization: Bearer <token>" with a token this server knows.';

/**
 * Checks `Authorization: Bearer <token>` against the configured tokens. Tokens are kept only as
 * SHA-256 digests, and a presented token is compared with every one of them with
 * `timingSafeEqual`, without stopping at a match, so the time taken says nothing about which
 * bytes or which token matched.
 */
export class TokenAuthenticator {
  private readonly entries: Array<{ digest: Buffer; user: AuthenticatedUser }>;

  /** `tokens` maps each token to the user name it stands for (a user may have several). */
  constructor(tokens: ReadonlyMap<string, string>) {
    if (tokens.size === 0) throw new Error('TokenAuthenticator needs at least one token.');
    this.entries = [...tokens].map(([token, userName]) => ({
      digest: digest(token),
      user: new AuthenticatedUser(userName),
    }));
  }

  /** The user an `Authorization` header value stands for, or undefined when it is missing or wrong. */
  authenticate(authorizationHeader: string | string[] | undefined): AuthenticatedUser | undefined {
    const token = bearerToken(authorizationHeader);
    if (token === undefined) return undefined;
    const presented = digest(token);
    let found: AuthenticatedUser | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(presented, entry.digest) && !found) found = entry.user;
    }
    return found;
  }

  /** The user names that have a token, sorted (for the start-up log; never the tokens). */
  users(): string[] {
    return [...new Set(this.entries.map((entry) => entry.user.userName))].sort();
  }
}

/** The token of a `Bearer` authorization value (the scheme's case ignored, as RFC 7235 says). */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? (header.length === 1 ? header[0] : undefined) : header;
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(value ?? '');
  return match?.[1];
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Says at start-up how clients are authenticated, and warns when anyone who reaches a non-loopback port may use the agent. */
export function logAuthentication(
  authenticator: { fileUsers(): string[]; issuer?: string } | undefined,
  host: string,
  log: Logger,
): void {
  const users = authenticator?.fileUsers() ?? [];
  if (users.length > 0) log.info('bearer-token authentication on', { users: users.join(' ') });
  if (authenticator?.issuer !== undefined)
    log.info('OpenID Connect authentication on', { issuer: authenticator.issuer });
  if (authenticator) return;
  if (isLoopback(host)) log.info('authentication off (no tokens configured)');
  else
    log.warn(
      'authentication off on a non-loopback address: anyone who reaches the port can use the agent; configure tokens',
      { host },
    );
}
