import { A2AError } from '@a2a-js/sdk/errors';

/**
 * A refusal to retry: the server cannot take the request now, but will soon (its turns are at
 * their limit). A2A 1.0 has no error type of its own for it: spec 3.3.2 files it under system
 * errors of "temporary unavailability", whose forms are HTTP 503 with Retry-After, gRPC
 * UNAVAILABLE and JSON-RPC -32603.
 *
 * The SDK's error mappings pick the code from the error's class and know none for this one, so
 * `transportForms` (a2a-errors.ts) gives it these: HTTP 503 with Retry-After on both JSON bindings
 * (`edge-http.ts`), JSON-RPC with -32603 as its body, so a balancer retries it, and HTTP+JSON
 * with the status name UNAVAILABLE ({@link unavailableBody}); gRPC UNAVAILABLE.
 * test/server/unavailable.test.ts pins them.
 */
export class UnavailableError extends A2AError {
  override reason = 'UNAVAILABLE';

  constructor(message: string) {
    super({ message, metadata: { retryAfterSeconds: String(RETRY_AFTER_SECONDS) } });
  }
}

/** What a refused client is told to wait before trying again (Retry-After, and the error's metadata). */
export const RETRY_AFTER_SECONDS = 2;

/** A retryable refusal's HTTP status, on both JSON bindings. */
export const HTTP_SERVICE_UNAVAILABLE = 503;

const UNAVAILABLE_STATUS = 'UNAVAILABLE';

/** An HTTP+JSON error body as a refusal to retry is sent: a 503's status name is UNAVAILABLE (spec 11.6, AIP-193), where the SDK, knowing no class for it, writes UNKNOWN. */
export function unavailableBody<T extends { error: { code: number; status: string } }>(body: T): T {
  if (body.error.code === HTTP_SERVICE_UNAVAILABLE) body.error.status = UNAVAILABLE_STATUS;
  return body;
}

/** Whether a JSON-RPC `error` is a refusal a balancer should retry elsewhere: its detail's reason is UNAVAILABLE (`UnavailableError`). */
export function isRetryableRefusal(error: unknown): boolean {
  const data = (error as { data?: unknown } | null | undefined)?.data;
  return Array.isArray(data) && data.some((detail) => (detail as { reason?: unknown })?.reason === UNAVAILABLE_STATUS);
}
