/**
 * W3C trace context across the harness's edges: read from an incoming A2A call (its HTTP
 * headers or gRPC metadata, kept in the call context's `state`), written into what the harness
 * sends on (model providers, MCP servers over HTTP, push notifications). With no SDK started the
 * API's propagator writes nothing, and no span is active: each helper then costs one check.
 */
import { context, propagation, trace } from '@opentelemetry/api';

/** The `ServerCallContext.state` key of the call's trace headers (`traceparent`, `tracestate`). */
export const TRACE_CARRIER_KEY = 'tiny-harness/trace-carrier';

/** The headers W3C trace context travels in. */
export type TraceCarrier = { traceparent: string; tracestate?: string };

/** A call's trace headers, read with `get` (an HTTP header or a gRPC metadata value); none without a `traceparent`. */
export function traceCarrier(get: (name: string) => unknown): TraceCarrier | undefined {
  const traceparent = get('traceparent');
  if (typeof traceparent !== 'string' || traceparent === '') return undefined;
  const tracestate = get('tracestate');
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}

/** `headers` plus the active trace context's, for a request the harness sends (a push notification). */
export function withTraceHeaders<T extends Record<string, string | number>>(headers: T): T {
  if (!trace.getActiveSpan()) return headers;
  const out: Record<string, string | number> = { ...headers };
  propagation.inject(context.active(), out);
  return out as T;
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A fetch that sends the active trace context along (`traceparent`), for the AI SDK's providers
 * and the MCP SDK's Streamable HTTP transport, which both take a `fetch`. `base` is looked up on
 * each call (default: the global fetch), so a fetch replaced later is still the one used.
 */
export function tracingFetch(base?: Fetch): Fetch {
  return (input, init) => {
    const fetch = base ?? globalThis.fetch;
    if (!trace.getActiveSpan()) return fetch(input, init);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    propagation.inject(context.active(), headers, { set: (carrier, key, value) => carrier.set(key, value) });
    return fetch(input, { ...init, headers });
  };
}
