import {
  A2A_ERROR_CODE,
  A2AError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  restStatusFor,
  toJsonRpcError,
  toRestErrorBody,
  type ErrorDetail,
  type RestErrorBody,
} from '@a2a-js/sdk/errors';
import type * as GrpcErrors from '@a2a-js/sdk/errors/grpc';
import type { Metadata } from '@grpc/grpc-js';
import { observed, type Step } from '../a2a/index.js';
import { isHarnessError, type HarnessErrorCode } from '../errors.js';
import { HTTP_SERVICE_UNAVAILABLE, UnavailableError, unavailableBody } from './unavailable.js';
import { A2A_METHODS, type RefusalReason } from '../telemetry/metrics.js';

/** What a client is told of a failure that is the server's own: the details go to the log only. */
export const INTERNAL_ERROR_MESSAGE = 'Internal error; the server logged it.';

type A2AErrorClass = new (message: string, metadata?: Record<string, string>) => A2AError;

/**
 * A2A 1.1's `TaskGenerationMismatchError` (draft `dev-1.1`, sections 3.3.2 and 5.4): a message's
 * `ifGenerationMatch` is not its task's generation. The SDK speaks 1.0 and has no class for it,
 * so its forms (JSON-RPC -32010, HTTP 409 ABORTED, gRPC ABORTED) are {@link transportForms}' own.
 */
export class TaskGenerationMismatchError extends A2AError {
  override reason = 'TASK_GENERATION_MISMATCH';

  constructor(message: string, metadata?: Record<string, string>) {
    super({ message, metadata });
  }
}

/** The draft's codes for {@link TaskGenerationMismatchError}. */
const GENERATION_MISMATCH = { jsonRpcCode: -32010, httpStatus: 409, statusName: 'ABORTED' } as const;

/**
 * A harness error that is an A2A error: its forms are the SDK's for that error, except where
 * the request failed before it was an A2A call and JSON-RPC 2.0 or HTTP has a code of its own.
 */
interface AsA2AError {
  a2a: A2AErrorClass;
  /** JSON-RPC 2.0's own code (parse error, invalid request) instead of the A2A error's. */
  jsonRpcCode?: number;
  /** HTTP's own status (413; 503 for a refusal before the request is read), on both bindings over HTTP. */
  httpStatus?: number;
}

/** A refusal A2A has no error for: each transport's own code, and no A2A error detail. */
interface Refusal {
  jsonRpcCode: number;
  /** On both bindings over HTTP. */
  httpStatus: number;
  /** The `google.rpc.Code` name of the HTTP+JSON error body. */
  statusName: string;
  grpcStatus: keyof typeof GrpcErrors.GRPC_STATUS_CODE;
}

/**
 * The one table from harness errors to the wire. `internal` errors are the server's own
 * business: the client gets {@link INTERNAL_ERROR_MESSAGE} and the log gets the reason.
 */
const WIRE: Record<HarnessErrorCode, AsA2AError | Refusal | 'internal'> = {
  task_not_found: { a2a: TaskNotFoundError },
  task_not_cancelable: { a2a: TaskNotCancelableError },
  // UnsupportedOperation is A2A's "not in this state" (gRPC and REST FAILED_PRECONDITION), as
  // the SDK answers a message to a finished task; A2A has no "busy" error.
  task_ended: { a2a: UnsupportedOperationError },
  turn_in_progress: { a2a: UnsupportedOperationError },
  // A2A 1.1's own error: -32010, 409, ABORTED (issue 36).
  task_generation_mismatch: { a2a: TaskGenerationMismatchError },
  // The task's queue holds as many messages as it may: "not in this state" until one has run.
  queue_full: { a2a: UnsupportedOperationError },
  // Likewise the task (or the user) has as many push configs as it may, until one is deleted.
  push_configs_full: { a2a: UnsupportedOperationError },
  // The same "not in this state": the turn this stream followed no longer holds its task.
  turn_fenced: { a2a: UnsupportedOperationError },
  // Temporary and retryable: HTTP 503 with Retry-After, gRPC UNAVAILABLE, JSON-RPC -32603 in an HTTP 503 (spec 3.3.2; unavailable.ts).
  turns_at_limit: { a2a: UnavailableError },
  // The same temporary refusal: this instance is stopping, another takes the retry.
  instance_draining: { a2a: UnavailableError },
  // Refused at the edge, before the request is read (admission.ts): a 503 on both bindings over HTTP, so a balancer sees it.
  requests_at_limit: { a2a: UnavailableError, httpStatus: 503 },
  event_loop_lagging: { a2a: UnavailableError, httpStatus: 503 },
  model_unknown: { a2a: RequestMalformedError },
  params_invalid: { a2a: RequestMalformedError },
  request_invalid: { a2a: RequestMalformedError, jsonRpcCode: A2A_ERROR_CODE.INVALID_REQUEST },
  request_unparsable: { a2a: RequestMalformedError, jsonRpcCode: A2A_ERROR_CODE.PARSE_ERROR },
  request_too_large: { a2a: RequestMalformedError, jsonRpcCode: A2A_ERROR_CODE.INVALID_REQUEST, httpStatus: 413 },
  unauthenticated: {
    jsonRpcCode: A2A_ERROR_CODE.INVALID_REQUEST,
    httpStatus: 401,
    statusName: 'UNAUTHENTICATED',
    grpcStatus: 'UNAUTHENTICATED',
  },
  // RFC 6750's invalid_token: the same 401 as no token, its description naming the reason.
  token_invalid: {
    jsonRpcCode: A2A_ERROR_CODE.INVALID_REQUEST,
    httpStatus: 401,
    statusName: 'UNAUTHENTICATED',
    grpcStatus: 'UNAUTHENTICATED',
  },
  scope_insufficient: {
    jsonRpcCode: A2A_ERROR_CODE.INVALID_REQUEST,
    httpStatus: 403,
    statusName: 'PERMISSION_DENIED',
    grpcStatus: 'PERMISSION_DENIED',
  },
  // The provider is down: retry later, as at any other temporary refusal before the call is read.
  identity_unavailable: { a2a: UnavailableError, httpStatus: 503 },
  route_unknown: {
    jsonRpcCode: A2A_ERROR_CODE.METHOD_NOT_FOUND,
    httpStatus: 404,
    statusName: 'NOT_FOUND',
    grpcStatus: 'UNIMPLEMENTED',
  },
  // Only a hook's trigger URL answers it (server/hook-route.ts): the hook exists, but takes no run now.
  hook_paused: {
    jsonRpcCode: A2A_ERROR_CODE.INVALID_REQUEST,
    httpStatus: 409,
    statusName: 'FAILED_PRECONDITION',
    grpcStatus: 'FAILED_PRECONDITION',
  },
  provider_failed: 'internal',
  store_failed: 'internal',
  data_unusable: 'internal',
  config_invalid: 'internal',
  config_unreadable: 'internal',
  tokens_invalid: 'internal',
};

/**
 * The A2A error a client receives for `error`, and whether it hides an internal failure that
 * should be logged. A2A errors pass as they are; anything else (a bug, a library's error) is
 * internal: its message may hold a path, a stack or a secret, and never reaches a client. So is
 * a refusal A2A has no error for, which only an edge makes: thrown behind one, it is a bug (but
 * `unauthenticated`, which {@link errorMappingStep} passes on to the binding's {@link transportForms}).
 */
export function toA2AError(error: unknown): { error: A2AError; internal?: unknown } {
  if (error instanceof A2AError) return { error };
  if (isHarnessError(error)) {
    const rule = WIRE[error.code];
    if (typeof rule === 'object' && 'a2a' in rule) return { error: new rule.a2a(error.message, error.metadata) };
  }
  return { error: new InternalFailure(), internal: error };
}

/**
 * A failure of the server itself, as a client receives it: {@link INTERNAL_ERROR_MESSAGE}, and
 * the codes A2A gives a system error (section 3.3.2: JSON-RPC -32603, HTTP 500, gRPC INTERNAL).
 * The SDK has no class for it and maps its base error as -32603 and 500, but gRPC UNKNOWN
 * ({@link grpcCodeOf}).
 */
export class InternalFailure extends A2AError {
  constructor() {
    super(INTERNAL_ERROR_MESSAGE);
  }
}

/** Each transport's form of one error (A2A 1.0.1, section 5.4, as the SDK maps it). */
export interface TransportForms {
  /** The failure to log when the client is told only {@link INTERNAL_ERROR_MESSAGE}. */
  internal?: unknown;
  /** The JSON-RPC response's `error`, and the HTTP status it is sent with. */
  jsonRpc: { httpStatus: number; error: { code: number; message: string; data?: ErrorDetail[] } };
  /** The HTTP+JSON binding's status and error body (`google.rpc.Status` JSON). */
  http: { status: number; body: RestErrorBody };
  /**
   * The status a gRPC call ends with: its code, its message, and the `grpc-status-details-bin`
   * trailer when A2A has an error for it. Only once {@link loadGrpcErrorForms} has resolved.
   */
  readonly grpc: GrpcForm;
}

export interface GrpcForm {
  code: number;
  details: string;
  metadata?: Metadata;
}

/**
 * The one place an error becomes a wire error, for every binding: what a call raises leaves the
 * path as an A2A error ({@link toA2AError}), and the bindings answer it, and an edge's refusal
 * of a request before the path sees it, with these forms (the SDK's mappings, but for the codes
 * of the errors it has no class for).
 */
export function transportForms(error: unknown): TransportForms {
  const rule = isHarnessError(error) ? WIRE[error.code] : undefined;
  if (typeof rule === 'object' && !('a2a' in rule)) return refusalForms(rule, (error as Error).message);
  const { error: a2a, internal } = toA2AError(error);
  if (a2a instanceof TaskGenerationMismatchError) return generationMismatchForms(a2a);
  const own: Partial<AsA2AError> = typeof rule === 'object' ? rule : {};
  // The one error A2A names no class for that is not internal: its 503 is ours (unavailable.ts).
  const httpStatus =
    own.httpStatus ?? (a2a instanceof UnavailableError ? HTTP_SERVICE_UNAVAILABLE : restStatusFor(a2a));
  const jsonRpcError = toJsonRpcError(a2a);
  return {
    ...(internal !== undefined && { internal }),
    jsonRpc: {
      // A retryable refusal is a 503 on JSON-RPC too, so a balancer retries it (unavailable.ts).
      httpStatus: own.httpStatus ?? (a2a instanceof UnavailableError ? HTTP_SERVICE_UNAVAILABLE : 200),
      error: own.jsonRpcCode === undefined ? jsonRpcError : { ...jsonRpcError, code: own.jsonRpcCode },
    },
    http: { status: httpStatus, body: unavailableBody(toRestErrorBody(a2a, httpStatus)) },
    get grpc() {
      const { errors, Metadata } = grpcWire();
      const metadata = errors.buildGrpcErrorMetadata(Metadata, a2a);
      return { code: grpcCodeOf(a2a, errors), details: a2a.message, ...(metadata && { metadata }) };
    },
  };
}

/** The SDK's gRPC code for `error`, but for the two errors it has no class for, which it would send as UNKNOWN. */
function grpcCodeOf(error: A2AError, errors: typeof GrpcErrors): number {
  if (error instanceof UnavailableError) return errors.GRPC_STATUS_CODE.UNAVAILABLE;
  if (error instanceof InternalFailure) return errors.GRPC_STATUS_CODE.INTERNAL;
  return errors.grpcStatusFor(error);
}

function refusalForms(rule: Refusal, message: string): TransportForms {
  return {
    jsonRpc: { httpStatus: rule.httpStatus, error: { code: rule.jsonRpcCode, message } },
    http: {
      status: rule.httpStatus,
      body: { error: { code: rule.httpStatus, status: rule.statusName, message, details: [] } },
    },
    get grpc() {
      return { code: grpcWire().errors.GRPC_STATUS_CODE[rule.grpcStatus], details: message };
    },
  };
}

function generationMismatchForms(error: TaskGenerationMismatchError): TransportForms {
  const { jsonRpcCode, httpStatus, statusName } = GENERATION_MISMATCH;
  const info = error.toErrorInfo();
  return {
    jsonRpc: { httpStatus: 200, error: { code: jsonRpcCode, message: error.message, data: [info] } },
    http: {
      status: httpStatus,
      body: { error: { code: httpStatus, status: statusName, message: error.message, details: [info] } },
    },
    get grpc() {
      const { errors, Metadata } = grpcWire();
      const code = errors.GRPC_STATUS_CODE.ABORTED;
      const metadata = new Metadata();
      const details = errors.encodeGrpcStatusDetails(code, error.message, error.reason, error.metadata);
      metadata.set(errors.GRPC_STATUS_DETAILS_BIN, details);
      return { code, details: error.message, metadata };
    },
  };
}

let loadedGrpcWire: { errors: typeof GrpcErrors; Metadata: typeof Metadata } | undefined;

/**
 * Loads what {@link TransportForms.grpc} needs: the SDK's gRPC error mapping and grpc-js. They
 * are loaded with the gRPC server only (`startGrpcServer` awaits this): the SDK's module and its
 * protobuf code took about 10 ms to load, measured alone, which a server without gRPC need not pay.
 */
export async function loadGrpcErrorForms(): Promise<void> {
  if (loadedGrpcWire) return;
  const [errors, grpc] = await Promise.all([import('@a2a-js/sdk/errors/grpc'), import('@grpc/grpc-js')]);
  loadedGrpcWire = { errors, Metadata: grpc.Metadata };
}

function grpcWire(): NonNullable<typeof loadedGrpcWire> {
  if (!loadedGrpcWire) throw new Error('gRPC error forms are not loaded: await loadGrpcErrorForms() first.');
  return loadedGrpcWire;
}

/**
 * The `errorMapping` step: every error any call raises leaves as an A2A error, through
 * {@link toA2AError}; an internal one is reported to `onInternal` (the log) first, a retryable
 * refusal (the turn bound's, a drain's) to `onRefused` (counted; an answer, not a failure).
 */
export function errorMappingStep(
  onInternal: (error: unknown, method: string) => void,
  onRefused: (reason: RefusalReason, method: string) => void = () => {},
): Step {
  const translate = (error: unknown, method: string): unknown => {
    // The extended card's refusal of an anonymous caller: left as it is, so that each binding
    // answers it as the edge answers a request without a valid token (401, UNAUTHENTICATED).
    if (isHarnessError(error) && error.code === 'unauthenticated') return error;
    const mapped = toA2AError(error);
    if (mapped.internal !== undefined) onInternal(mapped.internal, method);
    // Only the codes WIRE maps to UnavailableError come out as one: the refusals.
    else if (mapped.error instanceof UnavailableError && isHarnessError(error))
      onRefused(error.code as RefusalReason, method);
    return mapped.error;
  };
  return {
    name: 'errorMapping',
    around: (call, next) => observed(call, next, { failed: (error) => translate(error, A2A_METHODS[call.method]) }),
  };
}
