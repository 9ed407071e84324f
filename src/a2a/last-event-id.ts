import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * A call's `Last-Event-ID` (SSE's resume header; gRPC metadata `last-event-id`): the bindings
 * put it in the call context's `state` under this key (`server/call-context.ts`,
 * `server/grpc-binding.ts`), and `SubscribeToTask` resumes after it.
 */
export const LAST_EVENT_ID_KEY = 'tiny-harness/last-event-id';

/** The call's `Last-Event-ID` as a whole number, if it came with one (anything else is ignored). */
export function lastEventId(context: ServerCallContext | undefined): number | undefined {
  const given = context?.state.get(LAST_EVENT_ID_KEY);
  if (typeof given !== 'string' || !/^\d{1,15}$/.test(given.trim())) return undefined;
  return Number(given.trim());
}
