import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_VERSION_HEADER, Extensions, HTTP_EXTENSION_HEADER } from '@a2a-js/sdk';
import { ServerCallContext, type User } from '@a2a-js/sdk/server';
import { LAST_EVENT_ID_KEY, setClientGoneSignal } from '../a2a/index.js';
import { TRACE_CARRIER_KEY, traceCarrier } from '../telemetry/propagation.js';
import { checkProtocolVersion } from './protocol-version.js';

/** The SDK's `state` key of the request's headers, as its own transports fill it. */
const HEADERS_KEY = 'headers';

/** What a binding knows of a call, to build its context from. */
export interface CallFacts {
  /** A request header's value (gRPC: its metadata), by its name as A2A gives it. */
  header(name: string): string | undefined;
  user: User;
  /** Checked already by the binding. */
  requestedVersion: string | undefined;
  tenant?: string;
  /** The signal that fires when the client goes away; made only when something asks for it. */
  gone(): AbortSignal;
  /** Entries for `state` beyond the ones every binding sets. */
  state?: Iterable<readonly [string, unknown]>;
}

/**
 * The context of one call, as a plain value, whatever its binding: the user, the extensions the
 * client asks for (`A2A-Extensions`), the version it asks for, the tenant, and in `state` its
 * `Last-Event-ID` and its trace headers; and the signal that fires when the client goes away.
 */
export function callContextOf(call: CallFacts): ServerCallContext {
  const state = new Map<string, unknown>(call.state);
  const lastEventId = call.header('last-event-id');
  if (lastEventId !== undefined) state.set(LAST_EVENT_ID_KEY, lastEventId);
  const carrier = traceCarrier(call.header);
  if (carrier) state.set(TRACE_CARRIER_KEY, carrier);
  const context = new ServerCallContext({
    requestedExtensions: Extensions.parseServiceParameter(call.header(HTTP_EXTENSION_HEADER)),
    user: call.user,
    state,
    requestedVersion: call.requestedVersion,
    tenant: call.tenant,
  });
  setClientGoneSignal(context, call.gone);
  return context;
}

/**
 * The context of one call over HTTP: its version (`A2A-Version`) refused here when this server
 * does not speak it, the request's headers in `state` as the SDK's transports put them, and the
 * client gone when the response closes.
 */
export function httpCallContext(
  req: IncomingMessage,
  res: ServerResponse,
  user: User,
  tenant?: string,
): ServerCallContext {
  const read = (name: string) => header(req, name);
  const requestedVersion = read(A2A_VERSION_HEADER) || undefined;
  checkProtocolVersion(requestedVersion);
  return callContextOf({
    header: read,
    user,
    requestedVersion,
    tenant,
    gone: () => responseClosed(res),
    state: [[HEADERS_KEY, req.headers]],
  });
}

/** A header's value; a repeated one, as node joins it. */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * A signal that fires on `source`'s first `event` (an HTTP response's `close`: the client went
 * away, or the answer is complete, when it no longer matters; a gRPC call's `cancelled`), fired
 * already when it is `over`. A request's own `close` is no guide: it fires once the body is read.
 */
export function goneOn(
  source: { once(event: string, listener: () => void): unknown },
  event: string,
  over: boolean,
): AbortSignal {
  if (over) return AbortSignal.abort(CLIENT_GONE);
  const controller = new AbortController();
  source.once(event, () => controller.abort(CLIENT_GONE));
  return controller.signal;
}

/** Fires when the response closes: the client went away, or the answer is complete. */
export function responseClosed(res: ServerResponse): AbortSignal {
  return goneOn(res, 'close', res.closed);
}

/** The reason of a "client gone" signal: a string, since an abort without one builds an exception with its stack. */
const CLIENT_GONE = 'the client went away';
