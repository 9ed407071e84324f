/**
 * Turns whatever a provider call threw (or put on the stream) into one
 * `HarnessError('provider_failed')` whose message a person can act on: which model, what kind
 * of failure, and what the provider itself said. The AI SDK's errors carry the request URL and
 * body, which are never shown; the provider's own text (its error's message, or the body it
 * answered) is kept beside ours, cut short and with every secret removed (`redactSecrets`:
 * OpenAI's 401 text quotes part of the key). No stack, no cause.
 */
import { APICallError, LoadAPIKeyError, NoSuchModelError } from '@ai-sdk/provider';
import type { RetryError } from 'ai';
import { STATUS_CODES } from 'node:http';
import { HarnessError } from '../errors.js';
import { redactSecrets } from '../log.js';
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

/** The most characters of a provider's own text that a message quotes. */
const PROVIDER_WORDS_CHARS = 200;

/**
 * What the provider said about its failure, in one short line with secrets removed: its
 * error's message, or, when the SDK could not read its error body (HTML, another provider's
 * shape), that body's text. None when it said nothing but its HTTP status.
 */
export function providerWords(error: unknown): string | undefined {
  const call = isRetryError(error) ? error.lastError : error;
  if (!APICallError.isInstance(call) || call.statusCode === undefined || call.statusCode < 400) return undefined;
  const unread = call.data === undefined && call.responseBody?.trim() ? call.responseBody : undefined;
  // Cut before the patterns run: a body may be a whole page (whose tags go).
  const raw = unread?.slice(0, 4 * PROVIDER_WORDS_CHARS).replace(/<[^>]*>/g, ' ') ?? call.message;
  const text = redactSecrets(
    raw
      .slice(0, 4 * PROVIDER_WORDS_CHARS)
      .replace(/\s+/g, ' ')
      .trim(),
  );
  if (!text || text === STATUS_CODES[call.statusCode]) return undefined;
  return text.length > PROVIDER_WORDS_CHARS ? `${text.slice(0, PROVIDER_WORDS_CHARS - 1)}…` : text;
}

function describeStatus(status: number): string {
  if (status === 401) return 'the provider rejected the API key (HTTP 401)';
  if (status === 403) return 'the provider refused access with this API key (HTTP 403)';
  if (status === 404) return 'the provider does not know this model (HTTP 404)';
  if (status === 408 || status === 504) return `the provider timed out (HTTP ${status})`;
  if (status === 429) return 'the provider is rate limiting or out of quota (HTTP 429)';
  if (status >= 500) return `the provider had a server error (HTTP ${status})`;
  if (status >= 400) return `the provider refused the request (HTTP ${status})`;
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
    return describeStatus(status);
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

/** Our account of a failure, then the provider's own words when it gave any. */
function failureText(modelName: string, error: unknown): string {
  const words = providerWords(error);
  const said = words ? ` The provider said: "${words.replace(/\.$/, '')}".` : '';
  return `Model ${modelName} failed: ${describeProviderFailure(error)}.${said}`;
}

/** The error a turn reports when its model call fails. */
export function providerFailure(modelName: string, error: unknown): HarnessError {
  return new HarnessError('provider_failed', failureText(modelName, error));
}

/**
 * What the user is told, at once, when a request failed and is tried again: the failure as
 * {@link providerFailure} says it, and which attempt comes next.
 * @param attempt the attempt about to start, 2 for the first retry
 */
export function retryNotice(modelName: string, error: unknown, attempt: number, attempts: number): string {
  return `${failureText(modelName, error)} Retrying (attempt ${attempt} of ${attempts})…`;
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
