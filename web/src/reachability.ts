/**
 * When the harness cannot be reached: every request of the page goes through {@link harnessFetch},
 * which turns a failed fetch and a gateway's answer (a proxy's 502, 503 or 504; not the harness's
 * own 503, a JSON-RPC error refusing for now) into one error that says so in words, and refuses
 * any web page answered in the harness's place, so no HTML body ever reaches the page's text. {@link retryWhileUnreachable}
 * tries again with backoff until the harness answers.
 */
import { signedIn } from './sign-in.js';

/** The harness did not answer: nothing listens, or a proxy in front of it says it is down. Worth trying again. */
export class HarnessUnreachable extends Error {
  override name = 'HarnessUnreachable';
}

/** Statuses a proxy or load balancer answers for a harness it cannot reach. */
const GATEWAY_STATUSES = new Set([502, 503, 504]);

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

function statusLine(response: Response): string {
  return `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
}

/** `fetch` for the page's calls to the harness (the card, JSON-RPC), with the errors above, signed in (`sign-in.ts`). */
export const harnessFetch: typeof fetch = (input, init) => signedIn((signed) => reach(input, signed), init);

const reach: typeof fetch = async (input, init) => {
  let response: Response;
  try {
    response = await fetch(input, init);
  } catch (error) {
    if (isAbort(error) || init?.signal?.aborted) throw error;
    throw new HarnessUnreachable('The harness cannot be reached: it does not answer.', { cause: error });
  }
  // The harness itself refusing for now (draining, at its bound): its JSON-RPC error is the answer.
  if (response.status === 503 && (await isJsonRpcError(response))) return response;
  const html = (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/html');
  if (GATEWAY_STATUSES.has(response.status) || html) void response.body?.cancel().catch(() => undefined);
  if (GATEWAY_STATUSES.has(response.status)) {
    throw new HarnessUnreachable(
      `The harness cannot be reached: the server in front of it answered ${statusLine(response)}.`,
    );
  }
  // A web page where the harness should answer (a proxy's error page, a login page): not the harness.
  if (html) throw new Error(`The page's address answered ${statusLine(response)} with a web page, not the harness.`);
  return response;
};

/** Whether `response`'s body is a JSON-RPC error (read from a copy: the body stays for the client). */
async function isJsonRpcError(response: Response): Promise<boolean> {
  if (!(response.headers.get('content-type') ?? '').toLowerCase().includes('json')) return false;
  try {
    const body = (await response.clone().json()) as { jsonrpc?: unknown; error?: unknown } | null;
    return body?.jsonrpc === '2.0' && typeof body.error === 'object' && body.error !== null;
  } catch {
    return false;
  }
}

/** Whether `error` says the harness could not be reached (as opposed to an answer refusing the call). */
export function isUnreachable(error: unknown): boolean {
  if (error instanceof HarnessUnreachable) return true;
  // A stream cut off mid-way fails while its body is read, past harnessFetch.
  return error instanceof TypeError && /fetch|network/i.test(error.message);
}

/** The waits between attempts: quick at first, then every half a minute. */
export const RETRY_DELAYS_MS = [1000, 2000, 5000, 10_000, 30_000] as const;

/** The wait before attempt `failures + 1`. */
export function retryDelay(failures: number): number {
  return RETRY_DELAYS_MS[Math.min(failures, RETRY_DELAYS_MS.length - 1)]!;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** What the page says while it waits to try again. */
export function retryingText(error: unknown, delayMs: number): string {
  const why = error instanceof HarnessUnreachable ? error.message : 'The harness cannot be reached.';
  return `${why} Trying again in ${Math.round(delayMs / 1000)} s…`;
}

/**
 * `operation`'s result, tried again with backoff for as long as the harness cannot be reached
 * (`onRetry` is told each wait); any other failure is thrown, and so is the last one once
 * `signal` aborts.
 */
export async function retryWhileUnreachable<T>(
  operation: () => Promise<T>,
  onRetry: (error: unknown, delayMs: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await operation();
    } catch (error) {
      if (!isUnreachable(error) || signal?.aborted) throw error;
      const delay = retryDelay(failures);
      onRetry(error, delay);
      await pause(delay, signal);
    }
  }
}
