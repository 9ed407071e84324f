import { StreamResponse } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';

/**
 * How an event of a task becomes the text another instance reads back. The SDK's
 * `AgentExecutionEvent` mirrors the cases of the protocol's `StreamResponse` (its `kind` is the
 * payload's `$case`), so the event is stored as `StreamResponse.toJSON`: one codec, the SDK's
 * own, for all four kinds, with the enums as names and raw bytes as base64, exactly as the
 * store's other columns (see `codec.ts`, whose limits apply here too).
 */

export function encodeAgentEvent(event: AgentExecutionEvent): string {
  const payload = { $case: event.kind, value: event.data } as StreamResponse['payload'];
  return JSON.stringify(StreamResponse.toJSON({ payload }));
}

export function decodeAgentEvent(json: string): AgentExecutionEvent {
  const { payload } = StreamResponse.fromJSON(JSON.parse(json));
  switch (payload?.$case) {
    case 'task':
      return { kind: 'task', data: payload.value };
    case 'message':
      return { kind: 'message', data: payload.value };
    case 'statusUpdate':
      return { kind: 'statusUpdate', data: payload.value };
    case 'artifactUpdate':
      return { kind: 'artifactUpdate', data: payload.value };
    case undefined:
      throw new SyntaxError('A stored task event has no payload.');
  }
}
