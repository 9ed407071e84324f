/**
 * The built-in `fetch` tool (docs/workspace.md): one GET of an http(s) URL, under the SSRF guard
 * push uses (src/public-network.ts): a host that is, or resolves to, a non-public address is
 * refused inside the connection's own DNS lookup, at every redirect too. Bounded in time (the
 * whole fetch, redirects and body included), in redirects and in bytes read; a text body
 * (text/*, JSON, XML, JavaScript) is returned as text, HTML as it came (no dependency of the
 * project turns HTML into readable text), and a binary body is refused unread.
 */
import type { IncomingMessage } from 'node:http';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { FetchConfig } from '../config/workspace.js';
import { NotPublicAddress, hostOf, publicOnlyLookup, refuseLiteralAddress } from '../public-network.js';
import { VERSION } from '../version.js';
import { WorkspaceRefusal } from './workspace-root.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Media types read as text: text/*, JSON, XML, JavaScript, YAML and the `+json`/`+xml` suffixes. */
const TEXTUAL =
  /^(text\/[^;]+|application\/(json|xml|javascript|ecmascript|x-javascript|yaml|x-yaml|toml|x-ndjson)|[^/;]+\/[^;]+\+(json|xml))$/;
const HEADERS = {
  'User-Agent': `tiny-harness/${VERSION} (fetch tool)`,
  Accept: 'text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.9,*/*;q=0.5',
  'Accept-Encoding': 'gzip, deflate, br',
};

export interface FetchOutcome {
  /** A 2xx answer whose body was read as text. */
  ok: boolean;
  text: string;
}

/** How each hop is guarded: `exempt` names URLs the guard lets through (tests: a fixture origin). */
export interface FetchGuard {
  exempt?: (url: URL) => boolean;
}

export function urlOf(input: unknown): URL {
  const url = input && typeof input === 'object' ? (input as Record<string, unknown>).url : undefined;
  if (typeof url !== 'string' || !URL.canParse(url))
    throw new WorkspaceRefusal('The input needs "url", an absolute URL.');
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new WorkspaceRefusal('Only http:// and https:// URLs can be fetched.');
  return parsed;
}

/** GETs the input's URL; resolves with what the model is told (never rejects but for a bad input or a cancel). */
export async function fetchUrl(
  input: unknown,
  config: FetchConfig,
  signal: AbortSignal,
  guard: FetchGuard = {},
): Promise<FetchOutcome> {
  let url = urlOf(input);
  const timeout = AbortSignal.timeout(config.timeoutMs);
  const both = AbortSignal.any([signal, timeout]);
  const hops: string[] = [];
  try {
    for (;;) {
      const response = await get(url, config.allowPrivateNetworks || guard.exempt?.(url) === true, both);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location !== undefined) {
        response.destroy();
        const next = URL.canParse(location, url) ? new URL(location, url) : undefined;
        if (next === undefined || (next.protocol !== 'http:' && next.protocol !== 'https:'))
          return {
            ok: false,
            text: `${url.href} redirected (HTTP ${status}) to ${location}, which is not an http(s) URL.`,
          };
        if (hops.length >= config.maxRedirects)
          return {
            ok: false,
            text: `Stopped after ${config.maxRedirects} redirects (workspace.fetch.maxRedirects); the next was to ${next.href}.`,
          };
        hops.push(url.href);
        url = next;
        continue;
      }
      return await answer(url, hops, response, config.maxBytes);
    }
  } catch (error) {
    if (signal.aborted) throw error;
    return { ok: false, text: failure(error, url, timeout.aborted ? config.timeoutMs : undefined) };
  }
}

/** The model's words for a fetch that got no answer. */
function failure(error: unknown, url: URL, timedOutMs: number | undefined): string {
  if (timedOutMs !== undefined)
    return `No whole answer from ${url.host} within ${timedOutMs} ms (workspace.fetch.timeoutMs).`;
  if (error instanceof NotPublicAddress)
    return `Refused: ${hostOf(url)} is not on a public address (workspace.fetch.allowPrivateNetworks is off).`;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `The host ${hostOf(url)} could not be resolved.`;
  return `The fetch of ${url.href} failed (${code ?? 'unexpected error'}).`;
}

function get(url: URL, allowPrivate: boolean, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    // A literal address is connected to without a lookup: checked here.
    if (!allowPrivate) refuseLiteralAddress(url);
    const options: RequestOptions = {
      method: 'GET',
      headers: HEADERS,
      // A fresh connection per hop: a pooled socket could have been opened under other rules.
      agent: false,
      signal,
      ...(allowPrivate ? {} : { lookup: publicOnlyLookup as RequestOptions['lookup'] }),
    };
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, resolve);
    request.on('error', reject);
    request.end();
  });
}

/** The answer's status line and notes, then its body as text; a binary body is refused unread. */
async function answer(url: URL, hops: readonly string[], response: IncomingMessage, maxBytes: number) {
  const status = response.statusCode ?? 0;
  const ok = status >= 200 && status < 300;
  const contentType = response.headers['content-type'] ?? '';
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  const head = [
    `GET ${url.href}: HTTP ${status}${contentType ? ` (${contentType})` : ''}`,
    ...(hops.length > 0 ? [`[after ${hops.length} redirect${hops.length === 1 ? '' : 's'}, from ${hops[0]}]`] : []),
  ];
  if (mediaType !== '' && !TEXTUAL.test(mediaType)) {
    response.destroy();
    return { ok: false, text: [...head, `[a binary body (${mediaType}): fetch returns text only]`].join('\n') };
  }
  const decoded = decoder(response);
  if (decoded === undefined) {
    response.destroy();
    const encoding = String(response.headers['content-encoding']);
    return { ok: false, text: [...head, `[the body is encoded as ${encoding}, which fetch does not read]`].join('\n') };
  }
  const { bytes, cut } = await readBounded(decoded, maxBytes);
  response.destroy();
  if (mediaType === '' && bytes.subarray(0, 1024).includes(0))
    return { ok: false, text: [...head, '[a binary body: fetch returns text only]'].join('\n') };
  if (cut) head.push(`[body cut: reading stopped after ${maxBytes} bytes (workspace.fetch.maxBytes)]`);
  if (mediaType === 'text/html' || mediaType === 'application/xhtml+xml')
    head.push('[raw HTML, as the server sent it: not converted to text]');
  const body = bytes.length === 0 ? '[an empty body]' : textOf(bytes, contentType);
  return { ok, text: `${head.join('\n')}\n\n${body}` };
}

/** The body's bytes as sent, decompressed; undefined for an encoding not read. */
function decoder(response: IncomingMessage): Readable | undefined {
  const encoding = (response.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const through =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (through === undefined) return encoding === 'identity' ? response : undefined;
  response.on('error', (error) => through.destroy(error));
  return response.pipe(through);
}

/** Reads at most `maxBytes`, then stops reading. */
async function readBounded(stream: Readable, maxBytes: number): Promise<{ bytes: Buffer; cut: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    if (chunk.length > room) {
      chunks.push(chunk.subarray(0, room));
      size = maxBytes;
      cut = true;
      break;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { bytes: Buffer.concat(chunks, size), cut };
}

/** The bytes in the charset the content type names (UTF-8 when it names none, or one unknown). */
function textOf(bytes: Buffer, contentType: string): string {
  const charset = /charset="?([^";\s]+)"?/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}
