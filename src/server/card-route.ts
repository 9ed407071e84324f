/**
 * The agent card's route: the card built on every request (CMD-16), served with an ETag (a hash
 * of the JSON served) so that a client reading it again while it waits gets a 304 and no body
 * when nothing changed. The comparison is made here, on `If-None-Match` alone: express's
 * `req.fresh`, which the SDK's card handler relies on, sends the whole card to any request with
 * `Cache-Control: no-cache`, and fetch adds that header to every request that carries `If-None-Match`.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentCard } from '@a2a-js/sdk';

/** A strong ETag of the served bytes. */
export function cardEtag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

/** Whether `If-None-Match` names `etag` or is `*`; weak comparison (RFC 9110 §13.1.2), as for a GET. */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

/**
 * How long, in seconds, a client may keep the card without asking again: A2A 1.0 §8.6.1 asks for
 * a `max-age` fit for how often the card changes, and it follows the commands within seconds (CMD-16).
 */
export const CARD_MAX_AGE_S = 5;

/** GET (and HEAD) of the card; a failure to build it rejects, for the app's one error responder. */
export function agentCardRoute(
  card: () => Promise<AgentCard>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // When the card served last changed, for Last-Modified (§8.6.1's MAY): as this process saw it.
  let last = { etag: '', since: new Date().toUTCString() };
  return async function agentCard(req, res) {
    const body = JSON.stringify(await card());
    const etag = cardEtag(body);
    if (etag !== last.etag) last = { etag, since: new Date().toUTCString() };
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', last.since);
    res.setHeader('Cache-Control', `max-age=${CARD_MAX_AGE_S}`);
    if (matchesEtag(req.headers['if-none-match'], etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  };
}

/** The JWKS of the card's signing keys (`card-signing.ts`), checked again on every use: a rotation shows at once. */
export function sendJwks(res: ServerResponse, jwks: unknown): void {
  const body = JSON.stringify(jwks);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Content-Type', 'application/jwk-set+json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
