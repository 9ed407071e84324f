/**
 * One model request for one turn: the provider's own stream (`doStream` of the AI SDK's
 * language-model interface), reduced to what the harness needs. It yields the reply's text
 * deltas in order and returns the usage; every failure reaches the caller as a thrown error,
 * never as a silent end of the stream:
 *
 * - a provider failure (bad key, unreachable server, unknown model, a stream that closes
 *   mid-way or answers garbage, no complete reply within `timeoutMs`) throws
 *   `HarnessError('provider_failed')` naming the model and the kind of failure;
 * - the caller aborting `abortSignal` aborts the HTTP request and throws a DOMException named
 *   `AbortError` (test with {@link isAbortError}), so a cancelled turn is told apart from a
 *   failed one. Leaving the loop early (`break`) also aborts the request.
 *
 * Why not `streamText`: a turn is text in, text out, and `streamText` runs every reply through
 * a pipeline of a dozen web streams (steps, tools, telemetry) and validates every message of
 * the conversation with zod: measured, 10.7 ms of CPU before the first token where the
 * provider's stream takes 4.9 ms. The request is retried as `streamText` does it, with the AI
 * SDK's own `prepareRetries` (exported by `ai/internal`; pinned by the retry tests), and each
 * retry told at once to `onRetry` (`retries.ts`).
 * Provider errors arrive as `error` parts, and the stream may go on after one: the first ends
 * the reply.
 *
 * Usage:
 * ```ts
 * const reply = streamReply(model, { system, messages, abortSignal, timeoutMs, modelName });
 * let step; while (!(step = await reply.next()).done) send(step.value);
 * record(step.value.inputTokens, step.value.outputTokens);
 * ```
 */
import type { LanguageModelV3, LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { FinishReason } from 'ai';
import { DEFAULT_MODEL_TIMEOUT_MS } from '../config/schema.js';
import { isHarnessError } from '../errors.js';
import { providerFailure, providerTimeout } from './failure.js';
import { announcingRetries, retriesWithin, type RetryListener } from './retries.js';

/** One message of a conversation, as a turn sends it: the harness talks to models in text. */
export interface TextMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Token counts of one request; 0 when the provider did not report them. */
export interface ReplyUsage {
  inputTokens: number;
  outputTokens: number;
}

/** What the generator returns once the reply is complete. */
export interface ReplyOutcome extends ReplyUsage {
  /** Why the model stopped: `stop`, or `length` when it hit its output limit, etc. */
  finishReason: FinishReason;
}

export interface StreamReplyOptions {
  system?: string;
  messages: TextMessage[];
  /** Aborting it aborts the request; the generator then throws an AbortError. */
  abortSignal?: AbortSignal;
  /** Bound on the whole request, retries included (default 120 000). */
  timeoutMs?: number;
  /** The catalog id to name in error messages (default: derived from the model object). */
  modelName?: string;
  /** Retries of a request that failed before its reply started (default: what `timeoutMs` leaves room for). */
  maxRetries?: number;
  /** Told at once each time the request failed and is tried again (`retries.ts`). */
  onRetry?: RetryListener;
}

/** True for the error {@link streamReply} throws when its caller aborted it. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error || error instanceof DOMException ? error.name === 'AbortError' : false;
}

function abortError(): DOMException {
  return new DOMException('The model request was aborted.', 'AbortError');
}

/** `local.chat` + `small` → `local:small`, for messages when no catalog id was given. */
function nameOf(model: LanguageModelV3): string {
  return `${model.provider.split('.')[0]}:${model.modelId}`;
}

/** `ai/internal`, once the first model request loaded it. */
let aiInternal: typeof import('ai/internal') | undefined;

export async function* streamReply(
  model: LanguageModelV3,
  options: StreamReplyOptions,
): AsyncGenerator<string, ReplyOutcome, undefined> {
  const modelName = options.modelName ?? nameOf(model);
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const callerSignal = options.abortSignal;
  if (callerSignal?.aborted) throw abortError();

  // One signal for the request: the caller's abort, our timeout, or the consumer leaving early.
  const controller = new AbortController();
  let timedOut = false;
  let finished = false;
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('The model request timed out.', 'TimeoutError'));
  }, timeoutMs);

  /** Why the request ended without a reply: the caller, the timeout, or the provider. */
  const failure = (error: unknown): unknown => {
    if (timedOut) return providerTimeout(modelName, timeoutMs);
    if (callerSignal?.aborted) return abortError();
    return providerFailure(modelName, error);
  };

  try {
    // Loaded on the first model request (it is a sizeable part of start-up otherwise), then kept:
    // awaiting `import()` again yields to whatever else waits, ahead of the model request.
    const { prepareRetries } = (aiInternal ??= await import('ai/internal'));
    const maxRetries = options.maxRetries ?? retriesWithin(timeoutMs);
    const { retry } = prepareRetries({ maxRetries, abortSignal: controller.signal });
    const announcing = announcingRetries(model, { maxRetries, modelName, onRetry: options.onRetry });
    let outcome: ReplyOutcome | undefined;
    try {
      const prompt = providerPrompt(options.system, options.messages);
      const { stream } = await retry(() => announcing.doStream({ prompt, abortSignal: controller.signal }));
      const reader = stream.getReader();
      try {
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          const part = read.value;
          if (part.type === 'text-delta') {
            if (part.delta) yield part.delta;
          } else if (part.type === 'error') {
            throw failure(part.error);
          } else if (part.type === 'finish') {
            const { inputTokens, outputTokens } = part.usage;
            outcome = {
              inputTokens: inputTokens.total ?? 0,
              outputTokens: outputTokens.total ?? 0,
              finishReason: part.finishReason.unified,
            };
          }
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
      // A provider may end its stream quietly when the request is aborted.
      if (controller.signal.aborted) throw failure(abortError());
    } catch (error) {
      throw isHarnessError(error) ? error : failure(error);
    }
    if (!outcome) throw failure(new Error('Response stream ended without a finish reason.'));
    finished = true;
    return outcome;
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', onCallerAbort);
    // Not finished means the consumer left early or something threw: end the request.
    if (!finished && !controller.signal.aborted) controller.abort(abortError());
  }
}

/** The provider's prompt: the system prompt first, then the conversation, as text parts. */
function providerPrompt(system: string | undefined, messages: readonly TextMessage[]): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = system ? [{ role: 'system', content: system }] : [];
  for (const { role, content } of messages) {
    prompt.push(role === 'system' ? { role, content } : { role, content: [{ type: 'text', text: content }] });
  }
  return prompt;
}
