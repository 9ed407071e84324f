import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '../log.js';
import { requestUser } from './http-auth.js';

export const REQUEST_ID_HEADER = 'x-request-id';
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const RPC_METHOD = /^[A-Za-z/]{1,64}$/;

export interface RequestLogOptions {
  log: Logger;
  /** Also log the text of the message a request sends (a debugging aid; off by default). */
  logContent?: boolean;
}

/**
 * Gives every HTTP request an id (the client's `x-request-id` when it is a sane one, else a
 * UUID), echoes it in the response, and logs one line when the request ends: method, path
 * (without the query), status, duration, request id, the JSON-RPC method, and the user when
 * one authenticated. Never a header value other than the id, never a body, unless
 * `logContent` asks for the message text.
 */
export function requestLog(options: RequestLogOptions): RequestHandler {
  return (req, res, next) => {
    const offered = req.headers[REQUEST_ID_HEADER];
    const requestId = typeof offered === 'string' && SANE_REQUEST_ID.test(offered) ? offered : randomUUID();
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const started = process.hrtime.bigint();
    const path = req.path;
    // 'close' comes last, after 'finish' when the answer went out whole, alone when it did not.
    res.once('close', () => {
      const ms = Number((process.hrtime.bigint() - started) / 1000n) / 1000;
      const fields: Record<string, unknown> = {
        requestId,
        method: req.method,
        path,
        status: res.statusCode,
        ms,
        rpc: rpcMethod(req),
        user: requestUser(req)?.userName,
        aborted: res.writableFinished ? undefined : true,
      };
      if (options.logContent) fields.text = messageText(req);
      options.log.info('request', fields);
    });
    next();
  };
}

function rpcMethod(req: Request): string | undefined {
  const method = (req.body as { method?: unknown } | undefined)?.method;
  return typeof method === 'string' && RPC_METHOD.test(method) ? method : undefined;
}

/** The text parts of the message a JSON-RPC or HTTP+JSON request sends, when it sends one. */
function messageText(req: Request): string | undefined {
  const body = req.body as { params?: { message?: unknown }; message?: unknown } | undefined;
  const message = (body?.params?.message ?? body?.message) as { parts?: unknown } | undefined;
  if (!Array.isArray(message?.parts)) return undefined;
  const texts = message.parts
    .map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : ''))
    .filter(Boolean);
  return texts.length > 0 ? texts.join('\n') : undefined;
}
