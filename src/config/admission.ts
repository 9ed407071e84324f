/** The `admission` key of the config file: when a request is refused before any work, so that work never piles up (docs/operations.md, "Overload"). */
import { z } from 'zod';

/** See `admission.maxRequestsInProgress` and docs/performance.md (how it was chosen). */
export const DEFAULT_MAX_REQUESTS_IN_PROGRESS = 512;
/** See `admission.maxEventLoopDelayMs` and docs/performance.md (how it was chosen). */
export const DEFAULT_MAX_EVENT_LOOP_DELAY_MS = 20;
/** See `admission.eventLoopCheckFrom`: below it, a lagging loop is one large request or a shared machine, not a flood. */
export const DEFAULT_EVENT_LOOP_CHECK_FROM = 8;

export const admissionSchema = z.strictObject({
  maxRequestsInProgress: z
    .number()
    .int('must be a whole number of requests')
    .min(1, 'must be at least 1')
    .max(1_000_000)
    .default(DEFAULT_MAX_REQUESTS_IN_PROGRESS)
    .describe(
      'The most A2A calls in progress on one instance, of every transport (JSON-RPC, HTTP+JSON, gRPC), each from its arrival until its answer ends (a stream: its last event) or its client leaves; the card, the page and the probes do not count. One past it is refused at once, before its body is read, retryably (HTTP 503 with Retry-After on both HTTP bindings, gRPC UNAVAILABLE; docs/operations.md, "Overload"). Twice `maxTurnsInFlight` by default: each turn\'s own stream, and as many reads, subscriptions and commands (docs/performance.md).',
    ),
  maxEventLoopDelayMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(0)
    .max(60_000)
    .default(DEFAULT_MAX_EVENT_LOOP_DELAY_MS)
    .describe(
      'While the event loop lags more than this (and at least `eventLoopCheckFrom` calls are in progress), in milliseconds (its mean delay over the last quarter of a second), a new A2A call is refused at once, as one past `maxRequestsInProgress` is: the instance is busier than it can answer in time, and taking more would only make every answer later, the probes\' too (docs/operations.md, "Overload"; how the default was chosen: docs/performance.md). 0 never refuses for it.',
    ),
  eventLoopCheckFrom: z
    .number()
    .int('must be a whole number of requests')
    .min(0)
    .max(1_000_000)
    .default(DEFAULT_EVENT_LOOP_CHECK_FROM)
    .describe(
      'How many A2A calls must be in progress before a lagging event loop refuses new ones (`maxEventLoopDelayMs`). With fewer, the lag is one large request or a machine shared with other work, and refusing the next caller would relieve nothing: a single client sending 1 MB messages one after another was refused after the first on a loaded machine. A flood keeps far more in progress (163 in the run that found it). 0 checks the loop on every new call.',
    ),
});
