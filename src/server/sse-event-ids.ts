import type { RequestHandler } from 'express';
import { GENERATION_KEY } from '../wire.js';

/** The key as it appears in an event's JSON, followed by the generation's digits. */
const MARK = `"${GENERATION_KEY}":`;

/**
 * Gives each event of an SSE answer its generation as its SSE `id:` (the resume rule,
 * spec/stream-resume-extension-v1.md), so that a client's `EventSource` or SSE reader sends it
 * back as `Last-Event-ID`. The SDK's transports write each event as `data: <json>\n\n` with no
 * id and no way to add one: this is the one place that works around it, on the way out. The
 * generation is read from the event's own metadata (`GENERATION_KEY`), the last occurrence of
 * the key in the event: the event's own metadata comes after everything nested in it (a Task's
 * after its history, an update's after its status or artifact), as the SDK's JSON writes them.
 */
export function sseEventIds(): RequestHandler {
  return (_req, res, next) => {
    const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string' && chunk.startsWith('data: ') && isEventStream(res.getHeader('content-type'))) {
        const id = generationOf(chunk);
        if (id !== undefined) return write(`id: ${id}\n${chunk}`, ...rest);
      }
      return write(chunk, ...rest);
    }) as typeof res.write;
    next();
  };
}

function isEventStream(type: unknown): boolean {
  return typeof type === 'string' && type.startsWith('text/event-stream');
}

/** The generation in an event's JSON, if it carries one. */
export function generationOf(json: string): number | undefined {
  const at = json.lastIndexOf(MARK);
  if (at < 0) return undefined;
  const digits = /^\s*(\d{1,15})/.exec(json.slice(at + MARK.length, at + MARK.length + 24));
  return digits ? Number(digits[1]) : undefined;
}
