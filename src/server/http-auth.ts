import type { IncomingMessage, ServerResponse } from 'node:http';
import { UnauthenticatedUser, type User } from '@a2a-js/sdk/server';
import { HarnessError } from '../errors.js';
import { UNAUTHENTICATED_MESSAGE, type TokenAuthenticator } from './auth.js';
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
 * `WWW-Authenticate: Bearer`, and a body in the binding's own error shape (a JSON-RPC error for
 * JSON-RPC, an error object for HTTP+JSON); then the answer is undefined.
 */
export function authenticateRequest(
  authenticator: TokenAuthenticator | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  binding: 'jsonrpc' | 'rest',
): User | undefined {
  if (!authenticator) return NOBODY;
  const user = authenticator.authenticate(req.headers.authorization);
  if (user) {
    users.set(req, user);
    return user;
  }
  res.setHeader('WWW-Authenticate', 'Bearer realm="tiny-harness"');
  const refusal = new HarnessError('unauthenticated', UNAUTHENTICATED_MESSAGE);
  if (binding === 'jsonrpc') answerJsonRpcError(res, null, refusal);
  else answerRestError(res, refusal);
  return undefined;
}
