/**
 * Start-up probes of OpenAI-compatible servers: `GET {baseURL}/models`, bounded by a short
 * timeout, so a configured server without a model list, or an Ollama server on this machine,
 * offers what it serves. A probe never throws anything but a {@link ProbeError} whose message
 * is safe to log: no key, no credentials, no query string.
 */

export type FetchFunction = typeof globalThis.fetch;

/** Why a server offered no model list, in words that follow its URL in a log line. */
export class ProbeError extends Error {
  override readonly name = 'ProbeError';
}

/** A URL fit for a log line: origin and path only (no user info, query or fragment). */
export function displayURL(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`.replace(/\/$/, '');
  } catch {
    return '(invalid URL)';
  }
}

/** The first `code` (ECONNREFUSED, UND_ERR_SOCKET...) along an error's cause chain. */
function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** A network failure (no HTTP answer) in a few words: "refused the connection", ... */
export function describeNetworkFailure(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return 'did not answer in time';
  switch (errorCode(error)) {
    case 'ECONNREFUSED':
      return 'refused the connection (is the server running?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'has a host name that does not resolve';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'closed the connection';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'did not answer in time';
    default:
      return 'could not be reached';
  }
}

export interface ListModelsOptions {
  apiKey?: string;
  fetch?: FetchFunction;
  /** Bound on the whole request, body included. */
  timeoutMs: number;
}

/**
 * The model ids a server lists at `GET {baseURL}/models` (OpenAI's `{ data: [{ id }] }`, which
 * Ollama, llama.cpp, vLLM and LM Studio also serve). Throws a {@link ProbeError} saying why not.
 */
export async function listServerModels(baseURL: string, options: ListModelsOptions): Promise<string[]> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const signal = AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  try {
    response = await doFetch(`${baseURL.replace(/\/+$/, '')}/models`, {
      headers: { accept: 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
      signal,
    });
  } catch (error) {
    throw new ProbeError(describeNetworkFailure(error));
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    const hint = response.status === 401 || response.status === 403 ? ' (check its API key)' : '';
    throw new ProbeError(`answered HTTP ${response.status}${hint}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    throw new ProbeError(signal.aborted ? 'did not answer in time' : 'answered something that is not JSON');
  }
  const data = (body as { data?: unknown } | null)?.data;
  // Ollama answers `data: null` when no model is pulled.
  if (data === null) return [];
  if (!Array.isArray(data)) throw new ProbeError('answered something that is not a model list');
  const ids = data
    .map((item) => (item as { id?: unknown } | null)?.id)
    .filter((id): id is string => typeof id === 'string' && id.trim() !== '');
  return [...new Set(ids)];
}
