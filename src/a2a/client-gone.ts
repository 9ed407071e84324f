import {
  defaultServerCallContextBuilder,
  type ServerCallContext,
  type ServerCallContextBuilder,
  type User,
} from '@a2a-js/sdk/server';
import { setClientGoneSignal } from '@tiny-harness/commands-extension';

/*
 * The SDK gRPC transport's side of a call's "client gone" signal (the signal itself and the
 * streams that end on it are the extension package's: `clientGoneSignal`,
 * `detachedOnClientGone`; the HTTP bindings set it on the context they build,
 * `server/call-context.ts`). The SDK's gRPC transport builds the context from what a user
 * builder and a context builder return, and hands the context builder no request: the link is
 * the user object, made anew for every call by {@link withClientGone}.
 */

/**
 * What a transport knows of a call that the SDK does not pass on: its "client gone" signal, and
 * entries for the call context's `state` (its `Last-Event-ID`, its trace headers).
 */
interface CallFacts {
  gone: () => AbortSignal;
  state: ReadonlyArray<readonly [string, unknown]>;
}

const facts = new WeakMap<User, CallFacts>();

/**
 * Wraps a transport's user builder so that each call's user carries that call's signal and the
 * `state` entries the transport gives (the SDK's builders see the transport's call; its handlers
 * see only the context built from the user).
 */
export function withClientGone<Call>(
  userBuilder: (call: Call) => Promise<User>,
  goneSignal: (call: Call) => AbortSignal,
  stateOf: (call: Call) => ReadonlyArray<readonly [string, unknown]> = () => [],
): (call: Call) => Promise<User> {
  return async (call) => {
    const user = await userBuilder(call);
    // A user of its own for this call (the authenticator shares one per token).
    const own: User = { userName: user.userName, isAuthenticated: user.isAuthenticated };
    facts.set(own, { gone: () => goneSignal(call), state: stateOf(call) });
    return own;
  };
}

/** The SDK's context builder, plus the call's signal and state entries from its user. */
export const clientGoneContextBuilder: ServerCallContextBuilder = (options) => {
  const context = defaultServerCallContextBuilder(options);
  const known = options.user ? facts.get(options.user) : undefined;
  if (known) {
    setClientGoneSignal(context, known.gone);
    for (const [key, value] of known.state) if (value !== undefined) context.state.set(key, value);
  }
  return context;
};

/** The `ServerCallContext.state` key of the call's `Last-Event-ID` (SSE's resume header; gRPC metadata `last-event-id`). */
export const LAST_EVENT_ID_KEY = 'tiny-harness/last-event-id';

/** The call's `Last-Event-ID` as a whole number, if it came with one (anything else is ignored). */
export function lastEventId(context: ServerCallContext | undefined): number | undefined {
  const given = context?.state.get(LAST_EVENT_ID_KEY);
  if (typeof given !== 'string' || !/^\d{1,15}$/.test(given.trim())) return undefined;
  return Number(given.trim());
}

