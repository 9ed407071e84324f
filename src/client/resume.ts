/**
 * A turn's stream for the command-line clients, resumed when it breaks (a dropped connection, the
 * harness restarting) before the turn ends: `SubscribeToTask` with `Last-Event-ID` set to the
 * last generation seen (spec/stream-resume-extension-v1.md). The SDK's client takes request
 * headers per call (`serviceParameters`, which its JSON-RPC and HTTP+JSON transports send as
 * HTTP headers and its gRPC transport as call metadata, lower-cased there as gRPC wants), so no
 * interceptor is needed for the header.
 */
import type { Message, StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';
import { LAST_EVENT_ID_HEADER, resumableStream } from '../stream-resume.js';
import { TOOL_OUTPUT_ARTIFACT_NAME } from '../wire.js';

/** A refusal by the agent (an A2A error, or one an SSE event carried) is final: a broken connection is not. */
export function isAgentRefusal(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof A2AError) return true;
    current = current.cause;
  }
  return false;
}

/** Subscribes to a task's events after generation `after` (what a resume asks for). */
export function eventsAfter(
  client: Client,
  taskId: string,
  after: number,
  signal?: AbortSignal,
): AsyncGenerator<StreamResponse> {
  return client.resubscribeTask(
    { tenant: '', id: taskId },
    { signal, serviceParameters: { [LAST_EVENT_ID_HEADER]: String(after) } },
  );
}

/**
 * The events of the turn `message` starts, resumed after a break; `tell` gets one short line
 * when the connection dropped and one when the stream was resumed. That one says the reply goes
 * on only when it does (its next chunk came): a turn cut short by the server's restart ends
 * instead, and its end says so.
 */
export async function* turnEvents(
  client: Client,
  message: Message,
  signal: AbortSignal | undefined,
  tell: (line: string) => void,
): AsyncGenerator<StreamResponse, void, undefined> {
  let resumed = false;
  const events = resumableStream(
    client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} }, { signal }),
    (taskId, after, resumeSignal) => eventsAfter(client, taskId, after, resumeSignal),
    {
      signal,
      retryable: (error) => !isAgentRefusal(error),
      onDropped: () => tell('(connection lost; reconnecting…)'),
      onResumed: () => (resumed = true),
    },
  );
  for await (const event of events) {
    if (resumed) {
      resumed = false;
      const payload = event.payload;
      const goesOn = payload?.$case === 'artifactUpdate' && payload.value.artifact?.name !== TOOL_OUTPUT_ARTIFACT_NAME;
      tell(goesOn ? '(reconnected; the reply goes on where it broke off)' : '(reconnected)');
    }
    yield event;
  }
}
