/**
 * What the A2A 1.0 bindings wrap around the data model, from `docs/specification.md` (v1.0.0):
 * the JSON-RPC 2.0 response envelope and error object (spec 9.4, 9.5) and the HTTP+JSON error
 * body (spec 11.6, AIP-193), with the A2A error table of spec 5.4.
 */
import { z } from 'zod';

/** Spec 5.4: each A2A error's JSON-RPC code and its `google.rpc.ErrorInfo` reason (spec 9.5). */
export const A2A_ERRORS: Record<number, string> = {
  [-32001]: 'TASK_NOT_FOUND',
  [-32002]: 'TASK_NOT_CANCELABLE',
  [-32003]: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
  [-32004]: 'UNSUPPORTED_OPERATION',
  [-32005]: 'CONTENT_TYPE_NOT_SUPPORTED',
  [-32006]: 'INVALID_AGENT_RESPONSE',
  [-32007]: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  [-32008]: 'EXTENSION_SUPPORT_REQUIRED',
  [-32009]: 'VERSION_NOT_SUPPORTED',
};

const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const A2A_DOMAIN = 'a2a-protocol.org';

/** google.protobuf.Any in ProtoJSON: an object naming its type. */
const Any = z.looseObject({ '@type': z.string().min(1, 'must name its type (google.protobuf.Any @type)') });

/** google.rpc.ErrorInfo in ProtoJSON. */
const ErrorInfo = z.strictObject({
  '@type': z.literal(ERROR_INFO_TYPE),
  reason: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'must be UPPER_SNAKE_CASE (google.rpc.ErrorInfo.reason)'),
  domain: z.string().min(1),
  metadata: z.record(z.string(), z.string()).optional(),
});

const isErrorInfo = (detail: unknown): boolean =>
  typeof detail === 'object' && detail !== null && (detail as Record<string, unknown>)['@type'] === ERROR_INFO_TYPE;

/** The JSON-RPC 2.0 error object; an A2A error (spec 5.4) carries its ErrorInfo in `data` (spec 9.5). */
const JsonRpcError = z
  .strictObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() })
  .superRefine((error, ctx) => {
    const reason = A2A_ERRORS[error.code];
    if (reason === undefined) return;
    const infos = Array.isArray(error.data) ? error.data.filter(isErrorInfo) : [];
    const info = ErrorInfo.safeParse(infos[0]);
    if (!info.success || info.data.domain !== A2A_DOMAIN || info.data.reason !== reason) {
      ctx.addIssue({
        code: 'custom',
        path: ['data'],
        message: `an A2A error (code ${error.code}) MUST carry a google.rpc.ErrorInfo with reason ${reason} and domain ${A2A_DOMAIN} in its data array (spec 9.5, 5.4)`,
      });
    }
  });

/** A JSON-RPC 2.0 response: `jsonrpc: "2.0"`, the request's id, and a result or an error. */
export const JsonRpcResponse = z
  .strictObject({
    jsonrpc: z.literal('2.0', { error: 'must be "2.0" (JSON-RPC 2.0; spec 9.3)' }),
    id: z.union([z.string(), z.number(), z.null()]),
    result: z.unknown().optional(),
    error: JsonRpcError.optional(),
  })
  .refine(
    (response) => (response.result !== undefined) !== (response.error !== undefined),
    'must hold exactly one of result, error (JSON-RPC 2.0)',
  );

/** google.rpc.Code names, for `error.status` of the HTTP+JSON error body. */
const RPC_CODES = [
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

/**
 * The HTTP+JSON error body (spec 11.6, AIP-193): `{"error": {code, status, message, details}}`,
 * `code` the HTTP status (unknown for an error event inside a stream).
 */
export function restError(httpStatus?: number) {
  return z.strictObject({
    error: z.strictObject({
      code:
        httpStatus === undefined
          ? z.number().int()
          : z.literal(httpStatus, { error: `must be the HTTP status, ${httpStatus} (spec 11.6)` }),
      status: z.enum(RPC_CODES, {
        error: (issue) =>
          issue.input === undefined
            ? 'is missing: the HTTP+JSON error body names its google.rpc.Code, e.g. "INVALID_ARGUMENT" (spec 11.6, AIP-193)'
            : `${JSON.stringify(issue.input)} is not a google.rpc.Code name (spec 11.6, AIP-193)`,
      }),
      message: z.string(),
      // Any details; an ErrorInfo among them well-formed (spec 11.6).
      details: z
        .array(
          z.union([
            ErrorInfo,
            Any.refine((detail) => !isErrorInfo(detail), 'is not a well-formed google.rpc.ErrorInfo (spec 11.6)'),
          ]),
        )
        .optional(),
    }),
  });
}
