import type { IncomingMessage, ServerResponse } from 'node:http';
import { UnauthenticatedUser, type User } from '@a2a-js/sdk/server';
import type { CallMethod } from '../a2a/index.js';
import type { HarnessError } from '../errors.js';
import { wwwAuthenticate, type Authenticator } from './authentication.js';
import { answerJsonRpcError, answerRestError } from './edge-http.js';

/** Who the request log names: the user each request authenticated as. */
const users = new WeakMap<IncomingMessage, User>();

/** The user a request authenticated as, when it did. */
export function requestUser(req: IncomingMessage): User | undefined {
  return users.get(req);
}

const NOBODY = new UnauthenticatedUser();

/**
 * The user an A2A request is made by. Without an authenticator, nobody in particular. With one,
 * a request without a valid bearer token is refused before its body is read: HTTP 401 with
 * `WWW-Authenticate: Bearer` (`error="invalid_token"` and the reason for a token refused), or
 * 503 when the identity provider cannot be reached; a body in the binding's own error shape (a
 * JSON-RPC error for JSON-RPC, an error object for HTTP+JSON). Then the answer is undefined.
 */
export async function authenticateRequest(
  authenticator: Authenticator | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  binding: 'jsonrpc' | 'rest',
): Promise<User | undefined> {
  if (!authenticator) return NOBODY;
  const outcome = await authenticator.authenticate(req.headers.authorization);
  if ('user' in outcome) {
    users.set(req, outcome.user);
    return outcome.user;
  }
  answerAuthRefusal(res, outcome.refusal, binding);
  return undefined;
}

/** What the bindings call before a call runs: throws the refusal of a call its token has not the scopes for (403). */
export type ScopeCheck = (user: User, method: CallMethod, res: ServerResponse) => void;

/** The {@link ScopeCheck} of `authenticator`: the 403 with `WWW-Authenticate: Bearer error="insufficient_scope"`. */
export function scopeCheck(authenticator: Authenticator): ScopeCheck {
  return (user, method, res) => {
    const refusal = authenticator.scopeRefusal(user, method);
    if (!refusal) return;
    res.setHeader('WWW-Authenticate', wwwAuthenticate(refusal));
    throw refusal;
  };
}

/** Answers a refusal of the caller's token (401, 503) or of its scopes (403) in the binding's shape. */
export function answerAuthRefusal(res: ServerResponse, refusal: HarnessError, binding: 'jsonrpc' | 'rest'): void {
  if (refusal.code !== 'identity_unavailable') res.setHeader('WWW-Authenticate', wwwAuthenticate(refusal));
  if (binding === 'jsonrpc') answerJsonRpcError(res, null, refusal);
  else answerRestError(res, refusal);
}
