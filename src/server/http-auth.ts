import type { Request, RequestHandler } from 'express';
import type { User } from '@a2a-js/sdk/server';
import { UserBuilder } from '@a2a-js/sdk/server/express';
import { HarnessError } from '../errors.js';
import { UNAUTHENTICATED_MESSAGE, type TokenAuthenticator } from './auth.js';
import { answerJsonRpcError, answerRestError } from './edge-http.js';

const users = new WeakMap<Request, User>();

/** The user a request authenticated as, when it did. */
export function requestUser(req: Request): User | undefined {
  return users.get(req);
}

/** What the SDK's express handlers are given: the user the bearer middleware found, or none. */
export function userBuilderFor(authenticator: TokenAuthenticator | undefined): UserBuilder {
  if (!authenticator) return UserBuilder.noAuthentication;
  return async (req) => {
    const user = users.get(req);
    // The middleware runs first on every A2A route; reaching here without a user is a wiring bug.
    if (!user) throw new Error('request reached the A2A handler without authentication');
    return user;
  };
}

/**
 * Refuses a request without a valid bearer token, before its body is read: HTTP 401 with
 * `WWW-Authenticate: Bearer`, and a body in the binding's own error shape (a JSON-RPC error
 * for JSON-RPC, an error object for HTTP+JSON). With a valid token, remembers the user for
 * {@link userBuilderFor} and the request log.
 */
export function requireBearer(authenticator: TokenAuthenticator, binding: 'jsonrpc' | 'rest'): RequestHandler {
  return (req, res, next) => {
    const user = authenticator.authenticate(req.headers.authorization);
    if (user) {
      users.set(req, user);
      return next();
    }
    res.setHeader('WWW-Authenticate', 'Bearer realm="tiny-harness"');
    const refusal = new HarnessError('unauthenticated', UNAUTHENTICATED_MESSAGE);
    if (binding === 'jsonrpc') answerJsonRpcError(res, null, refusal);
    else answerRestError(res, refusal);
  };
}
