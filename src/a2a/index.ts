/**
 * Building blocks for any @a2a-js/sdk server, below both the Commands extension and the
 * harness: a message id handled once per user (CMD-34), and a call's "client gone" signal with
 * the streams that end on it. The generic ones live in the extension's package
 * (`@tiny-harness/commands-extension`), which needs them; the harness's own (generations, a
 * call's `Last-Event-ID`, the request path's steps and their `compose`) are here.
 */
export {
  MessageClaims,
  contentDigest,
  type Claim,
  type FirstClaim,
  type RepeatClaim,
  InMemoryMessageClaimStore,
  type MessageClaimStore,
  type ClaimScope,
  type ClaimOutcome,
  type StoredClaim,
  CLIENT_GONE_KEY,
  clientGoneSignal,
  setClientGoneSignal,
  detachedOnClientGone,
} from '@tiny-harness/commands-extension';
export { generationOf, markGeneration } from './generations.js';
// A2A 1.1's generation fields on the JSON bindings; the gRPC binding's are in `version-proto.ts`,
// imported by it alone (it loads @bufbuild/protobuf's wire reader, which no other binding needs).
export { requestFieldsOf, responseJsonFor, int64Of, type GenerationParams } from './version-fields.js';
export { LAST_EVENT_ID_KEY, lastEventId } from './last-event-id.js';
export {
  CALL_METHODS,
  compose,
  handlerTerminal,
  observed,
  type Call,
  type CallMethod,
  type CallOf,
  type ComposedSteps,
  type Next,
  type Observer,
  type Outcome,
  type OutcomeOf,
  type Step,
  type Stream,
  type StreamingMethod,
} from './steps.js';
