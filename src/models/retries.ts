/**
 * How a model request is tried again, in one place for both paths of a turn (`streamReply`
 * and the tool loop). The AI SDK does the retrying (its `prepareRetries`, as `streamText`
 * does): it tries a request again when the provider's error says it may (`isRetryable`: HTTP
 * 408, 409, 429, 5xx, a reset connection), after 2 s and then 4 s, or after what the
 * provider's `retry-after` header asks when that is shorter than a minute. It tells nobody
 * meanwhile; {@link announcingRetries} tells the turn at once, so the user does not wait
 * through the backoff in silence.
 */
import { APICallError, type LanguageModelV3 } from '@ai-sdk/provider';
import { retryNotice } from './failure.js';

/**
 * How many retries the AI SDK may make within the request's time budget. It waits 2 s before
 * its first retry and 4 s before its second; a retry that cannot start before the timeout only
 * turns a clear failure (HTTP 500, a reset) into "timed out". Half the budget goes to waiting.
 */
export function retriesWithin(timeoutMs: number): number {
  if (timeoutMs >= 12_000) return 2;
  if (timeoutMs >= 4_000) return 1;
  return 0;
}

/** Told each time a model request failed and is about to be tried again: why, in words fit to show the user. */
export type RetryListener = (notice: string) => void;

/**
 * `model`, whose failed requests that the AI SDK will try again are told to `onRetry` as they
 * fail (before the SDK's wait). The SDK retries around each `doStream` call with the rule
 * below and gives up after `maxRetries`; a request that succeeds starts the count again (the
 * next step of a tool loop is a request of its own). A request the caller aborted is not
 * tried again, and not told.
 */
export function announcingRetries(
  model: LanguageModelV3,
  options: { maxRetries: number; modelName: string; onRetry?: RetryListener },
): LanguageModelV3 {
  const { maxRetries, modelName, onRetry } = options;
  if (!onRetry || maxRetries === 0) return model;
  let failures = 0;
  const announcing: LanguageModelV3 = Object.create(model) as LanguageModelV3;
  announcing.doStream = async (call) => {
    try {
      const result = await model.doStream(call);
      failures = 0;
      return result;
    } catch (error) {
      failures += 1;
      const retried = failures <= maxRetries && willRetry(error) && !call.abortSignal?.aborted;
      if (retried) onRetry(retryNotice(modelName, error, failures + 1, maxRetries + 1));
      else failures = 0;
      throw error;
    }
  };
  return announcing;
}

/** The AI SDK's own test of an error it tries again (`retryWithExponentialBackoffRespectingRetryHeaders`). */
function willRetry(error: unknown): boolean {
  return APICallError.isInstance(error) && error.isRetryable;
}
