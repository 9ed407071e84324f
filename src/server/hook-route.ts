/**
 * A hook's trigger URL (issue 39, docs/schedules.md): `POST /hooks/<id>/<secret>` starts a run of
 * the hook, the body added to its prompt, and is answered 202 with the run's task id. The secret
 * is the credential: no bearer token is asked for, and it is never logged ({@link redactHookPath}).
 * An unknown hook and a wrong secret are the same 404 as any unknown path; a paused hook is a 409;
 * a run refused at the turn bound or while the instance drains is a 503 with Retry-After.
 *
 * A POST may carry an idempotency key (`Idempotency-Key`, the IETF httpapi draft's header, or
 * GitHub's `X-GitHub-Delivery`, which a redelivery repeats): a retry with it starts no second run
 * and is answered 202 with the first run's task id, `repeated: true` (and Stripe's
 * `Idempotent-Replayed: true` header); one with another body, 422, as the draft says.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HarnessError } from '../errors.js';
import { answerRestError, JSON_CONTENT_TYPE, sendJson } from './edge-http.js';
import { bodyTextRefusal } from './edge-schema.js';
import { JSON_TYPE, mediaTypeOf, readUnencodedBody } from './http-body.js';

/** Where a hook's trigger URL is: `/hooks/<id>/<secret>`. */
export const HOOKS_PATH = '/hooks';

/** What a POST gives its run: the body's text (`text/*`, or no content type), or its JSON. */
export type HookBody = { text: string } | { data: unknown };

/** Runs hooks; implemented by the runtime's schedules (`runtime/schedules/hook-triggers.ts`). */
export interface HookTrigger {
  /**
   * Starts a run of hook `id` if `secret` is its own (compared in constant time with its stored
   * SHA-256), with `body` added to its prompt; throws `turns_at_limit` or `instance_draining`
   * (nothing kept) when it cannot start now.
   */
  trigger(
    id: string,
    secret: string,
    body: HookBody | undefined,
    idempotencyKey?: string,
  ): Promise<
    | { taskId: string; repeated?: true }
    | { refused: 'not_found' | 'paused' }
    | { refused: 'key_reused'; taskId: string }
  >;
}

export interface HookRouteOptions {
  hooks: HookTrigger;
  /** The largest body accepted, in bytes (`schedules.hookMaxBytes`); larger ones are answered 413. */
  maxBytes: number;
}

/** A hook's id and secret as they are made (`s` and 10 hex digits; 43 characters of base64url). */
const HOOK_URL_PATH = /^\/hooks\/(s[0-9a-f]{10})\/([A-Za-z0-9_-]{43})$/;

/** The headers that name a POST's idempotency key, the first present taken: the draft's, then GitHub's. */
const KEY_HEADERS = [
  ['idempotency-key', 'Idempotency-Key'],
  ['x-github-delivery', 'X-GitHub-Delivery'],
] as const;

/** The longest idempotency key taken: a UUID is 36 characters, a ULID 26. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 200;

const KEY_PATTERN = new RegExp(`^[\\x20-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_CHARS}}$`);

/**
 * A POST's idempotency key, as sent (opaque: the draft's quoted form keeps its quotes), or none;
 * refused (400) when it is not 1 to 200 printable ASCII characters, or sent twice.
 */
export function idempotencyKeyOf(headers: NodeJS.Dict<string[]>): string | undefined {
  for (const [name, shown] of KEY_HEADERS) {
    const values = headers[name];
    if (values === undefined) continue;
    if (values.length !== 1)
      throw new HarnessError('request_invalid', `Send one ${shown} header, not ${values.length}.`);
    if (!KEY_PATTERN.test(values[0]!))
      throw new HarnessError(
        'request_invalid',
        `The ${shown} header must be 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters (a UUID, for instance).`,
      );
    return values[0];
  }
  return undefined;
}

/** Whether `path` is under the hooks' path, which this route answers whole. */
export function isHookPath(path: string): boolean {
  return path.startsWith(`${HOOKS_PATH}/`);
}

/** The path as it may be logged: what follows a hook's id (its secret) replaced, under any case. */
export function redactHookPath(path: string): string {
  return path.replace(
    /^(\/hooks\/)([^/]*)(\/.*)?$/i,
    (_, prefix: string, id: string, rest?: string) =>
      `${prefix}${/^s[0-9a-f]{10}$/.test(id) ? id : '…'}${rest ? '/…' : ''}`,
  );
}

export function hookRoute(
  options: HookRouteOptions,
): (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void> {
  return async (req, res, path) => {
    const matched = HOOK_URL_PATH.exec(path);
    if (!matched) return void answerRestError(res, notFound());
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return refuse(res, 405, 'A trigger URL takes POST only.');
    }
    const type = mediaTypeOf(req);
    const json = type !== undefined && JSON_TYPE.test(type);
    if (type !== undefined && !json && !type.startsWith('text/'))
      return refuse(
        res,
        415,
        `Unsupported Content-Type "${type}": send the body as text (text/plain) or JSON (application/json).`,
      );
    const key = idempotencyKeyOf(req.headersDistinct);
    const body = await readHookBody(req, options.maxBytes, json);
    const outcome = await options.hooks.trigger(matched[1]!, matched[2]!, body, key);
    if (!('refused' in outcome)) {
      if (!outcome.repeated) return sendJson(res, 202, { taskId: outcome.taskId }, JSON_CONTENT_TYPE);
      res.setHeader('Idempotent-Replayed', 'true');
      return sendJson(res, 202, { taskId: outcome.taskId, repeated: true }, JSON_CONTENT_TYPE);
    }
    if (outcome.refused === 'key_reused')
      return refuse(
        res,
        422,
        `This idempotency key was sent before with another body; its run is task ${outcome.taskId}. Send a new key for a new request.`,
      );
    if (outcome.refused === 'paused')
      return void answerRestError(
        res,
        new HarnessError('hook_paused', 'This hook is paused: its owner resumes it with /schedule resume <id>.'),
      );
    answerRestError(res, notFound());
  };
}

/**
 * The body a POST gives its run: none when empty; text for `text/*` (UTF-8) or no content type;
 * JSON (`json`: `application/json` and any `+json`), its nesting bounded before it is parsed as
 * the A2A routes' is. Larger than `maxBytes`, refused (413) as soon as that is known.
 */
async function readHookBody(req: IncomingMessage, maxBytes: number, json: boolean): Promise<HookBody | undefined> {
  const bytes = await readUnencodedBody(req, maxBytes, 'Send the body without a Content-Encoding.');
  if (bytes.length === 0) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HarnessError('request_unparsable', 'The body is not UTF-8 text.');
  }
  if (!json) return { text };
  const reason = bodyTextRefusal(bytes);
  if (reason) throw new HarnessError('request_invalid', reason);
  try {
    return { data: JSON.parse(text) as unknown };
  } catch {
    throw new HarnessError('request_unparsable', 'The body is not valid JSON.');
  }
}

/** A refusal A2A has no error for, in the HTTP+JSON error body's shape (`google.rpc.Status`). */
function refuse(res: ServerResponse, status: 405 | 415 | 422, message: string): void {
  sendJson(res, status, { error: { code: status, status: 'INVALID_ARGUMENT', message } }, JSON_CONTENT_TYPE);
}

function notFound(): HarnessError {
  return new HarnessError('route_unknown', 'Not found.');
}
