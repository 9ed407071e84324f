import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_VERSION_HEADER, Extensions, HTTP_EXTENSION_HEADER } from '@a2a-js/sdk';
import { ServerCallContext, type User } from '@a2a-js/sdk/server';
import { LAST_EVENT_ID_KEY, setClientGoneSignal } from '../a2a/index.js';
import { TRACE_CARRIER_KEY, traceCarrier } from '../telemetry/propagation.js';
import { checkProtocolVersion } from './protocol-version.js';

/** The SDK's `state` key of the request's headers, as its own transports fill it. */
const HEADERS_KEY = 'headers';

/**
 * The context of one call over HTTP, as a plain value: the user the bearer check found, the
 * extensions the client asks for (`A2A-Extensions`), the version it asks for (`A2A-Version`,
 * refused here when this server does not speak it), the tenant, and in `state` the request's
 * headers, its `Last-Event-ID` and its trace headers; and the signal
 * that fires when the client goes away (the response closes).
 */
export function httpCallContext(
  req: IncomingMessage,
  res: ServerResponse,
  user: User,
  tenant?: string,
): ServerCallContext {
  const requestedVersion = header(req, A2A_VERSION_HEADER) || undefined;
  checkProtocolVersion(requestedVersion);
  const entries = new Map<string, unknown>([[HEADERS_KEY, req.headers]]);
  const lastEventId = header(req, 'last-event-id');
  if (lastEventId !== undefined) entries.set(LAST_EVENT_ID_KEY, lastEventId);
  const carrier = traceCarrier((name) => header(req, name));
  if (carrier) entries.set(TRACE_CARRIER_KEY, carrier);
  const context = new ServerCallContext({
    requestedExtensions: Extensions.parseServiceParameter(header(req, HTTP_EXTENSION_HEADER)),
    user,
    state: entries,
    requestedVersion,
    tenant,
  });
  setClientGoneSignal(context, () => responseClosed(res));
  return context;
}

/** A header's value; a repeated one, as node joins it. */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Fires when the response closes: the client went away, or the answer is complete (when it
 * no longer matters). A request's own `close` is no guide: it fires once the body is read.
 */
export function responseClosed(res: ServerResponse): AbortSignal {
  if (res.closed) return AbortSignal.abort(CLIENT_GONE);
  const controller = new AbortController();
  res.once('close', () => controller.abort(CLIENT_GONE));
  return controller.signal;
}

/** The reason of a "client gone" signal: a string, since an abort without one builds an exception with its stack. */
const CLIENT_GONE = 'the client went away';
