/**
 * Building blocks for any @a2a-js/sdk server, below both the Commands extension and the
 * harness: a request handler that wraps another, a message id handled once per user (CMD-34),
 * and a call's "client gone" signal with the streams that end on it. They know the SDK and the
 * wire vocabulary, nothing of the extension or the harness, so the extension stays mountable on
 * a bare SDK server and the harness's own steps need not reach into the extension for them.
 */
export { DelegatingRequestHandler } from './delegating-handler.js';
export { generationOf, markGeneration } from './generations.js';
export { MessageClaims, contentDigest, type Claim, type FirstClaim, type RepeatClaim } from './message-claims.js';
export {
  InMemoryMessageClaimStore,
  type MessageClaimStore,
  type ClaimScope,
  type ClaimOutcome,
  type StoredClaim,
} from './message-claim-store.js';
export {
  CLIENT_GONE_KEY,
  clientGoneSignal,
  setClientGoneSignal,
  detachedOnClientGone,
  withClientGone,
  clientGoneContextBuilder,
  httpGoneSignal,
  grpcGoneSignal,
  LAST_EVENT_ID_KEY,
  lastEventId,
} from './client-gone.js';
