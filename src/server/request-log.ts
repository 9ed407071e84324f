import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { pinoFor, type Logger } from '../log.js';
import { requestUser } from './http-auth.js';
import type { ReadRequest } from './http-body.js';
import { redactHookPath } from './hook-route.js';

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
 * UUID), echoes it in the response, and logs one line when the request ends, by pino-http:
 * `request` with the method, path (without the query, a hook's secret redacted), status, duration, request id, the
 * JSON-RPC method, and the user when one authenticated. Never a header value other than the
 * id, never a body, unless `logContent` asks for the message text: pino-http's own request and
 * response objects are not serialized at all.
 */
export function requestLog(options: RequestLogOptions): HttpLogger {
  // Microseconds, where pino-http's own response time counts whole milliseconds.
  const started = new WeakMap<ServerResponse, bigint>();
  const fields = (req: IncomingMessage, res: ServerResponse): Record<string, unknown> => {
    const request = req as ReadRequest;
    const begun = started.get(res);
    return {
      requestId: req.id,
      method: req.method,
      // A hook's trigger URL holds its secret: the line names the hook, never the secret.
      path: redactHookPath((req.url ?? '/').split('?', 1)[0]!),
      status: res.statusCode,
      ms: begun === undefined ? undefined : Number((process.hrtime.bigint() - begun) / 1000n) / 1000,
      rpc: rpcMethod(request),
      user: requestUser(request)?.userName,
      aborted: res.writableFinished ? undefined : true,
      text: options.logContent ? messageText(request) : undefined,
    };
  };
  return pinoHttp({
    logger: pinoFor(options.log),
    genReqId: (req, res) => {
      started.set(res, process.hrtime.bigint());
      const offered = req.headers[REQUEST_ID_HEADER];
      const requestId = typeof offered === 'string' && SANE_REQUEST_ID.test(offered) ? offered : randomUUID();
      res.setHeader(REQUEST_ID_HEADER, requestId);
      return requestId;
    },
    // The line carries `fields` alone, nothing of pino-http's request objects; the request id is
    // among them, which spares a child logger per request.
    quietResLogger: true,
    wrapSerializers: false,
    serializers: { req: () => undefined },
    useLevel: 'info',
    customSuccessMessage: () => 'request',
    customErrorMessage: () => 'request',
    customSuccessObject: fields,
    customErrorObject: fields,
  });
}

function rpcMethod(req: ReadRequest): string | undefined {
  const method = (req.body as { method?: unknown } | undefined)?.method;
  return typeof method === 'string' && RPC_METHOD.test(method) ? method : undefined;
}

/** The text parts of the message a JSON-RPC or HTTP+JSON request sends, when it sends one. */
function messageText(req: ReadRequest): string | undefined {
  const body = req.body as { params?: { message?: unknown }; message?: unknown } | undefined;
  const message = (body?.params?.message ?? body?.message) as { parts?: unknown } | undefined;
  if (!Array.isArray(message?.parts)) return undefined;
  const texts = message.parts
    .map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : ''))
    .filter(Boolean);
  return texts.length > 0 ? texts.join('\n') : undefined;
}
