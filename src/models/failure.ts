/**
 * Turns whatever a provider call threw (or put on the stream) into one
 * `HarnessError('provider_failed')` whose message a person can act on: which model, what kind
 * of failure. The AI SDK's errors carry the request URL, the request body and the provider's
 * own text (OpenAI's 401 text quotes part of the key), so messages are built here from the
 * status and the error's kind; a provider's text is only kept, sanitized, for requests it
 * refused (4xx other than auth), where it usually says what to change. No stack, no cause.
 */
import { APICallError, LoadAPIKeyError, NoSuchModelError } from '@ai-sdk/provider';
import type { RetryError } from 'ai';
import { HarnessError } from '../errors.js';
import { describeNetworkFailure } from './probe.js';

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const INVALID_REPLY_ERRORS = new Set([
  'AI_JSONParseError',
  'AI_TypeValidationError',
  'AI_InvalidResponseDataError',
  'AI_EmptyResponseBodyError',
  'AI_NoContentGeneratedError',
  'AI_InvalidStreamPartError',
]);

/** True for an error some cause of which is a network failure (socket closed, refused...). */
function isNetworkFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (current instanceof TypeError && /^(terminated|fetch failed)$/i.test(current.message)) return true;
  }
  return false;
}

/** A provider's own words, cut to one short line with URLs and key-like tokens removed. */
export function sanitizeDetail(text: string): string {
  const line = text.split(/\r?\n/)[0] ?? '';
  const clean = line
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '[url]')
    .replace(/\b(sk|pk|rk|key|api|bearer)[-_][\w-]{4,}/gi, '[redacted]')
    .replace(/[A-Za-z0-9_\-+/=]{24,}/g, '[redacted]')
    .trim();
  return clean.length > 160 ? `${clean.slice(0, 157)}...` : clean;
}

function describeStatus(status: number, detail: string): string {
  if (status === 401) return 'the provider rejected the API key (HTTP 401)';
  if (status === 403) return 'the provider refused access with this API key (HTTP 403)';
  if (status === 404) return `the provider does not know this model (HTTP 404)${detail}`;
  if (status === 408 || status === 504) return `the provider timed out (HTTP ${status})`;
  if (status === 429) return 'the provider is rate limiting or out of quota (HTTP 429)';
  if (status >= 500) return `the provider had a server error (HTTP ${status})`;
  if (status >= 400) return `the provider refused the request (HTTP ${status})${detail}`;
  return `the provider answered HTTP ${status} with something that is not a valid reply`;
}

/** The kind of failure in a few words, e.g. "the provider rejected the API key (HTTP 401)". */
export function describeProviderFailure(error: unknown): string {
  if (isRetryError(error)) {
    const attempts = error.errors.length;
    return `${describeProviderFailure(error.lastError)}, after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
  }
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined || (status >= 200 && status < 300)) {
      if (isNetworkFailure(error)) {
        return status === undefined
          ? `the provider ${describeNetworkFailure(error.cause)}`
          : 'the connection closed before the reply was complete';
      }
      return 'the provider answered something that is not a valid reply';
    }
    const raw =
      error.message && !/^(Failed to process|Bad Request|Not Found|Unauthorized)/.test(error.message)
        ? sanitizeDetail(error.message)
        : '';
    return describeStatus(status, raw ? `: ${raw}` : '');
  }
  if (LoadAPIKeyError.isInstance(error)) return 'no API key is configured for this provider';
  if (NoSuchModelError.isInstance(error)) return 'the provider does not offer this model';
  if (error instanceof Error && /ended without a finish reason/i.test(error.message))
    return 'the reply stream ended before the model finished';
  if (error instanceof Error && INVALID_REPLY_ERRORS.has(error.name))
    return 'the provider answered something that is not a valid reply';
  if (isNetworkFailure(error)) return 'the connection closed before the reply was complete';
  const name = error instanceof Error && /^[\w$]{1,40}$/.test(error.name) ? error.name : typeof error;
  return `the call failed unexpectedly (${name})`;
}

/** The error a turn reports when its model call fails. */
export function providerFailure(modelName: string, error: unknown): HarnessError {
  return new HarnessError('provider_failed', `Model ${modelName} failed: ${describeProviderFailure(error)}.`);
}

/** The error a turn reports when its model call took longer than allowed. */
export function providerTimeout(modelName: string, timeoutMs: number): HarnessError {
  return new HarnessError(
    'provider_failed',
    `Model ${modelName} failed: no complete reply within ${timeoutMs} ms (timed out).`,
  );
}

/**
 * `RetryError.isInstance`, by the AI SDK's own error marker: `ai` itself is not loaded at
 * start-up only to recognise its errors.
 */
function isRetryError(error: unknown): error is RetryError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[RETRY_ERROR_MARKER] === true;
}

const RETRY_ERROR_MARKER = Symbol.for('vercel.ai.error.AI_RetryError');
