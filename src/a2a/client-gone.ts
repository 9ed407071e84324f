import type { Request } from 'express';
import {
  defaultServerCallContextBuilder,
  type ServerCallContext,
  type ServerCallContextBuilder,
  type User,
} from '@a2a-js/sdk/server';

/**
 * What a stream held for a client does when that client goes away (its connection closed, its
 * gRPC call cancelled). The SDK's transports notice only when the next event is written, and an
 * idle task may have no next event for hours: a dropped `SubscribeToTask` then kept its
 * listener, its queue and the response for as long (16.5 MB per thousand, and a
 * `MaxListenersExceededWarning` after ten). So each call carries a signal in its context's
 * `state`: the transports give it (express and gRPC, at the end of this file), and the streams
 * here end on it at once.
 */

/** The `ServerCallContext.state` key of the call's "client gone" `AbortSignal`. */
export const CLIENT_GONE_KEY = 'tiny-harness/client-gone';

/** The signal that fires when the caller goes away, if the transport gave one. */
export function clientGoneSignal(context: ServerCallContext | undefined): AbortSignal | undefined {
  const given = context?.state.get(CLIENT_GONE_KEY);
  if (typeof given !== 'function') return given instanceof AbortSignal ? given : undefined;
  const signal = (given as () => AbortSignal)();
  context!.state.set(CLIENT_GONE_KEY, signal);
  return signal;
}

/**
 * Gives a call its "client gone" signal; for transports (and tests that play one). A function
 * makes the signal when first asked, already fired if the client is gone by then: most calls
 * (a command, a `GetTask`) never ask, and a signal, its listener and its firing at the end of
 * every call were a tenth of a command's CPU.
 */
export function setClientGoneSignal(context: ServerCallContext, signal: AbortSignal | (() => AbortSignal)): void {
  context.state.set(CLIENT_GONE_KEY, signal);
}

/**
 * The client's view of a turn's stream, which ends as soon as the client goes away. The turn's
 * own stream cannot simply be ended: the SDK stores a turn's events while its stream is read,
 * so it is read on, in the background, to its end; the turn goes on and is stored, and only
 * what the client held (the response, the transport's loop) is released at once. Errors of that
 * background reading, which nobody waits for any more, go to `onError`.
 */
export async function* detachedOnClientGone<T>(
  stream: AsyncGenerator<T, void, undefined>,
  signal: AbortSignal | undefined,
  onError: (error: unknown) => void,
): AsyncGenerator<T, void, undefined> {
  if (!signal) return yield* stream;
  let removeListener = () => {};
  const gone = new Promise<'gone'>((resolve) => {
    if (signal.aborted) return resolve('gone');
    const listener = () => resolve('gone');
    signal.addEventListener('abort', listener, { once: true });
    removeListener = () => signal.removeEventListener('abort', listener);
  });
  let pending: Promise<IteratorResult<T, void>> | undefined;
  let ended = false;
  try {
    for (;;) {
      pending = stream.next();
      const result = await Promise.race([pending, gone]);
      if (result === 'gone') return;
      pending = undefined;
      if (result.done) {
        ended = true;
        return;
      }
      yield result.value;
    }
  } catch (error) {
    ended = true; // the stream threw: it is over, and its error reaches the client
    throw error;
  } finally {
    removeListener();
    // Gone, or stopped being read for any reason before the end: read the rest nobody will see.
    if (!ended) drain(stream, pending).catch(onError);
  }
}

async function drain<T>(
  stream: AsyncGenerator<T, void, undefined>,
  pending: Promise<IteratorResult<T, void>> | undefined,
): Promise<void> {
  if (pending && (await pending).done) return;
  while (!(await stream.next()).done);
}

/*
 * The transports' side. The SDK's transports build the context from what a user builder and a
 * context builder return, and hand the context builder no request: the link is the user
 * object, made anew for every call by {@link withClientGone}.
 */

/** Each call's signal, made when first asked (`setClientGoneSignal`). */
/**
 * What a transport knows of a call that the SDK does not pass on: its "client gone" signal, and
 * entries for the call context's `state` (its `Last-Event-ID`, where its SSE ids go).
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

/**
 * Fires when the response closes: the client went away, or the answer is complete (when it
 * no longer matters). A request's own `close` is no guide: it fires once the body is read.
 */
export function httpGoneSignal(req: Request): AbortSignal {
  if (req.res?.closed) return AbortSignal.abort(CLIENT_GONE);
  const controller = new AbortController();
  req.res?.once('close', () => controller.abort(CLIENT_GONE));
  return controller.signal;
}

/** Fires when the client cancels a gRPC call (or its connection drops). */
export function grpcGoneSignal(call: {
  cancelled?: boolean;
  once(event: 'cancelled', listener: () => void): unknown;
}): AbortSignal {
  if (call.cancelled) return AbortSignal.abort(CLIENT_GONE);
  const controller = new AbortController();
  call.once('cancelled', () => controller.abort(CLIENT_GONE));
  return controller.signal;
}

/** The reason of a "client gone" signal: a string, since an abort without one builds an exception with its stack. */
const CLIENT_GONE = 'the client went away';
