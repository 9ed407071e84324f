import type { RequestHandler, Response } from 'express';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { generationOf, type Step, type Stream } from '../a2a/index.js';

/**
 * Each event of an SSE answer gets its generation as its SSE `id:` (the resume rule,
 * spec/stream-resume-extension-v1.md), so that a client's SSE reader sends it back as
 * `Last-Event-ID`. The SDK's transports write each event as `data: <json>\n\n`, with no id and
 * no way to add one, from the stream the request path yields: this file is the one place that
 * works around it. A step of the path (`sseIdsStep`) notes the generation of each
 * event it passes on, in order, in the call's queue; the middleware (`sseEventIds`) takes the
 * next one as the transport writes each event, and writes it as the event's id.
 */

/** The call context `state` key of the queue the call's SSE ids go through. */
export const SSE_IDS_KEY = 'tiny-harness/sse-ids';

/** The queue of an HTTP response's SSE ids: made by the middleware, filled by the step. */
export function sseIdsOf(res: Response): Array<number | undefined> | undefined {
  return res.locals.sseIds as Array<number | undefined> | undefined;
}

/** Writes each SSE event's id, from the call's queue (`sseIdsStep`). */
export function sseEventIds(): RequestHandler {
  return (_req, res, next) => {
    const ids: Array<number | undefined> = [];
    res.locals.sseIds = ids;
    const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      // An error event starts with `event: error`: it is no event of the stream, and takes no id.
      if (typeof chunk === 'string' && chunk.startsWith('data: ')) {
        const id = ids.shift();
        if (id !== undefined) return write(`id: ${id}\n${chunk}`, ...rest);
      }
      return write(chunk, ...rest);
    }) as typeof res.write;
    next();
  };
}

/** The `sseIds` step: notes each streamed event's generation in the call's queue. */
export function sseIdsStep(): Step {
  return {
    name: 'sseIds',
    methods: ['sendMessageStream', 'resubscribe'],
    around: (call, next) => noted(next() as Stream, call.context),
  };
}

async function* noted(stream: Stream, context: ServerCallContext): Stream {
  const ids = context.state.get(SSE_IDS_KEY) as Array<number | undefined> | undefined;
  if (!ids) return yield* stream;
  for await (const item of stream) {
    ids.push(generationOf(item));
    yield item;
  }
}
