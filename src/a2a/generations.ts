import type { StreamResponse } from '@a2a-js/sdk';
import { GENERATION_KEY } from '../wire.js';

/**
 * The generation a stream item carries (spec/stream-resume-extension-v1.md): in its metadata
 * (`GENERATION_KEY`), or marked on it when its metadata may hold no more keys (a command reply,
 * CMD-4), for the SSE id its transport writes.
 */
const marks = new WeakMap<object, number>();

/** Marks `value` (an event whose metadata takes no more keys) with its generation. */
export function markGeneration<T extends object>(value: T, generation: number): T {
  marks.set(value, generation);
  return value;
}

/** The generation a stream item carries: in its metadata, or marked. */
export function generationOf(item: StreamResponse): number | undefined {
  const value = item.payload?.value as { metadata?: Record<string, unknown> } | undefined;
  if (!value) return undefined;
  const given = value.metadata?.[GENERATION_KEY];
  return typeof given === 'number' ? given : marks.get(value);
}
