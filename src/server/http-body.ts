import type { IncomingMessage } from 'node:http';
import { HarnessError } from '../errors.js';
import { bodyTextRefusal } from './edge-schema.js';

/** A request whose JSON body has been read: `body` is undefined when it had none, or not JSON. */
export type ReadRequest = IncomingMessage & { body?: unknown };

/** The media types read as JSON: A2A's own, plain JSON, and any `+json`. */
export const JSON_TYPE = /^application\/(?:[a-z0-9.!#$%&'*^_`|~-]+\+)?json$/;

/** `"4mb"`, `"512kb"`, `"1024"` as bytes (1024-based, as express's limit was read). */
export function parseByteLimit(limit: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(limit);
  if (!match) throw new Error(`Not a size: ${limit} (write it as e.g. 4mb or 512kb).`);
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b'];
  return Math.floor(Number(match[1]) * unit);
}

/** The media type of the request's `Content-Type`, lower case, without parameters; undefined without one. */
export function mediaTypeOf(req: IncomingMessage): string | undefined {
  const given = req.headers['content-type'];
  return given === undefined ? undefined : given.split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * Reads the request's body as JSON when it has one with a JSON media type, into `req.body`:
 * larger than `limit` bytes, it is refused as `request_too_large` (413) as soon as that is
 * known; a body whose structure alone is far too big (`bodyTextRefusal`) before it is parsed;
 * one that does not parse as a JSON object or array, as `request_unparsable`. An empty body is
 * `{}`. Without a body, or with another media type, `req.body` stays undefined: each binding
 * names the content type it wants.
 */
export async function readJsonBody(req: ReadRequest, limit: number): Promise<void> {
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '');
  const type = mediaTypeOf(req);
  if (!hasBody || type === undefined || !JSON_TYPE.test(type)) return;
  const bytes = await readUnencodedBody(req, limit, 'The request could not be processed.');
  const reason = bodyTextRefusal(bytes);
  if (reason) throw new HarnessError('request_invalid', reason);
  req.body = parseStrict(bytes.toString('utf8'));
}

/**
 * The body's bytes, sent without a content coding: refused past `limit` bytes, before anything
 * is read when its Content-Length says so; refused with `encodedMessage` when it is encoded.
 */
export async function readUnencodedBody(req: IncomingMessage, limit: number, encodedMessage: string): Promise<Buffer> {
  const length = req.headers['content-length'];
  if (length !== undefined && Number(length) > limit) throw tooLarge();
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity')
    throw new HarnessError('request_invalid', encodedMessage);
  return readBytes(req, limit);
}

/**
 * The body's bytes, refused past `limit`. Read by events, not by async iteration: leaving that
 * early destroys the socket, and the client would get a reset instead of its 413; the rest of
 * a refused body is read and dropped.
 */
function readBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData).off('end', onEnd).off('error', onError);
      req.resume();
      reject(tooLarge());
    };
    const onEnd = () => resolve(Buffer.concat(chunks, size));
    const onError = (error: Error) => reject(error);
    req.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

/** JSON whose top level is an object or an array, as express's parser took it ("strict"). */
function parseStrict(text: string): unknown {
  if (text.length === 0) return {};
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') throw unparsable();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw unparsable();
  }
}

function tooLarge(): HarnessError {
  return new HarnessError('request_too_large', 'The request body is larger than this server accepts.');
}

function unparsable(): HarnessError {
  return new HarnessError('request_unparsable', 'The request body is not valid JSON.');
}
