import type { RequestHandler } from 'express';
import { RETRY_AFTER_SECONDS } from './unavailable.js';

/** The reason a retryable refusal's error detail carries (`UnavailableError`: the turn bound, a drain, admission). */
const UNAVAILABLE_REASON = 'UNAVAILABLE';
const HTTP_SERVICE_UNAVAILABLE = 503;

/** Whether a JSON-RPC `error` is a refusal a balancer should retry elsewhere: its detail's reason is UNAVAILABLE. */
export function isRetryableRefusal(error: unknown): boolean {
  const data = (error as { data?: unknown } | null | undefined)?.data;
  return Array.isArray(data) && data.some((detail) => (detail as { reason?: unknown })?.reason === UNAVAILABLE_REASON);
}

/**
 * For the JSON-RPC route: an answer whose body is a retryable refusal (this instance drains, or is
 * at its bound on turns) leaves as HTTP 503 with `Retry-After`, the JSON-RPC error as its body,
 * so that a balancer retries it on another instance (A2A 1.0 section 3.3.2 gives a temporary
 * unavailability HTTP 503 with Retry-After). The SDK's JSON-RPC handler answers every error with
 * 200, and is told the status here, at the one place the answer is written. Every other JSON-RPC
 * error stays a 200; so does a refusal inside a stream already under way (its status is sent).
 */
export function retryableRefusalAnswers(): RequestHandler {
  return (_req, res, next) => {
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      if (!res.headersSent && isRetryableRefusal((body as { error?: unknown } | undefined)?.error)) {
        res.status(HTTP_SERVICE_UNAVAILABLE);
        res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
      }
      return json(body);
    };
    next();
  };
}
