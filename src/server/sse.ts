import type { ServerResponse } from 'node:http';
import { formatSSEErrorEvent, SSE_HEADERS, type StreamResponse } from '@a2a-js/sdk';
import { generationOf, type Stream } from '../a2a/index.js';

export interface SseAnswer {
  /** The `data:` of one event, as JSON. */
  eventJson(item: StreamResponse): unknown;
  /** Answers a failure before the first event, as the binding answers any other failure. */
  failedFirst(error: unknown): void;
  /** The `data:` of the `event: error` that ends a stream failing later. */
  errorJson(error: unknown): unknown;
  /** Sets headers every answer of the call carries (the activated extensions). */
  headers(): void;
}

/**
 * Answers a streaming call with Server-Sent Events, once its first event is in: a stream that
 * fails before it is answered as a failure, with the status a balancer reads. Each event is
 * `id: <generation>` (the resume rule, spec/stream-resume-extension-v1.md: a client's SSE
 * reader sends it back as `Last-Event-ID`; none when the event carries none), then
 * `data: <json>`; a later failure is an `event: error` with the binding's error body, as the
 * SDK's transports write it, which takes no id.
 */
export async function answerSse(res: ServerResponse, stream: Stream, answer: SseAnswer): Promise<void> {
  let first: IteratorResult<StreamResponse, void>;
  try {
    first = await stream.next();
  } catch (error) {
    answer.headers();
    answer.failedFirst(error);
    return;
  }
  for (const [name, value] of Object.entries(SSE_HEADERS)) res.setHeader(name, value);
  answer.headers();
  res.statusCode = 200;
  res.flushHeaders();
  try {
    for (let next = first; !next.done; next = await stream.next()) res.write(sseEvent(next.value, answer));
  } catch (error) {
    if (!res.writableEnded) res.write(formatSSEErrorEvent(answer.errorJson(error)));
  } finally {
    if (!res.writableEnded) res.end();
  }
}

function sseEvent(item: StreamResponse, answer: SseAnswer): string {
  const id = generationOf(item);
  const data = `data: ${JSON.stringify(answer.eventJson(item))}\n\n`;
  return id === undefined ? data : `id: ${id}\n${data}`;
}
