import type { Request } from 'express';
import { defaultServerCallContextBuilder, type ServerCallContextBuilder, type User } from '@a2a-js/sdk/server';
import { setClientGoneSignal } from '../commands/index.js';

/**
 * Gives every A2A call a signal, made when first asked, that fires when its client goes away
 * (an HTTP connection closed, a gRPC call cancelled), in the call context (`commands/client-gone.ts` says what
 * streams do with it). The SDK's transports build the context from what a user builder and a
 * context builder return, and hand the context builder no request: the link is the user
 * object, made anew for every call by {@link withClientGone}.
 */

/** Each call's signal, made when first asked (`setClientGoneSignal`). */
const signals = new WeakMap<User, () => AbortSignal>();

/** Wraps a transport's user builder so that each call's user carries that call's signal. */
export function withClientGone<Call>(
  userBuilder: (call: Call) => Promise<User>,
  goneSignal: (call: Call) => AbortSignal,
): (call: Call) => Promise<User> {
  return async (call) => {
    const user = await userBuilder(call);
    // A user of its own for this call (the authenticator shares one per token).
    const own: User = { userName: user.userName, isAuthenticated: user.isAuthenticated };
    signals.set(own, () => goneSignal(call));
    return own;
  };
}

/** The SDK's context builder, plus the call's signal from its user. */
export const clientGoneContextBuilder: ServerCallContextBuilder = (options) => {
  const context = defaultServerCallContextBuilder(options);
  const signal = options.user ? signals.get(options.user) : undefined;
  if (signal) setClientGoneSignal(context, signal);
  return context;
};

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
