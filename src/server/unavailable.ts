import type { Message, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { A2AError } from '@a2a-js/sdk/errors';
import { DelegatingRequestHandler } from '../a2a/index.js';

/**
 * A refusal to retry: the server cannot take the request now, but will soon (its turns are at
 * their limit). A2A 1.0 has no error type of its own for it: spec 3.3.2 files it under system
 * errors of "temporary unavailability", whose forms are HTTP 503 with Retry-After, gRPC
 * UNAVAILABLE and JSON-RPC -32603.
 *
 * The SDK's error mappings pick the code from the error's class and know none for this one.
 * The project's HTTP bindings answer it as HTTP 503 with Retry-After on both JSON bindings
 * (`transportForms`, `edge-http.ts`): JSON-RPC with -32603 as its body, so a balancer retries it,
 * and HTTP+JSON with the status name UNAVAILABLE ({@link unavailableBody}). The SDK's gRPC
 * transport takes the code an error of its own transport carries (`transport`, with `status`),
 * so it is handed the error in that form ({@link UnavailableForm}); test/server/unavailable.test.ts pins it.
 */
export class UnavailableError extends A2AError {
  override reason = 'UNAVAILABLE';
  /** Set on the copy given to the HTTP+JSON or gRPC transport ({@link inForm}). */
  transport?: 'rest' | 'grpc';
  /** HTTP status, read by the SDK's HTTP+JSON transport when `transport` is `rest`. */
  statusCode?: number;
  /** gRPC status code, read by the SDK's gRPC transport when `transport` is `grpc`. */
  status?: number;

  constructor(message: string) {
    super({ message, metadata: { retryAfterSeconds: String(RETRY_AFTER_SECONDS) } });
  }

  /** The same error in the form the SDK's `binding` transport reads its code from. */
  inForm(binding: 'rest' | 'grpc'): UnavailableError {
    const copy = new UnavailableError(this.message);
    copy.transport = binding;
    if (binding === 'rest') copy.statusCode = HTTP_SERVICE_UNAVAILABLE;
    else copy.status = GRPC_UNAVAILABLE;
    return copy;
  }
}

/** What a refused client is told to wait before trying again (Retry-After, and the error's metadata). */
export const RETRY_AFTER_SECONDS = 2;

const HTTP_SERVICE_UNAVAILABLE = 503;
/** google.rpc.Code UNAVAILABLE: gRPC's "retry with backoff". */
const GRPC_UNAVAILABLE = 14;

/**
 * The handler as the SDK's gRPC transport is given it: an {@link UnavailableError} leaves it
 * in that transport's form. Only sending a message can be refused so.
 */
export class UnavailableForm extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly binding: 'rest' | 'grpc',
  ) {
    super(inner);
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    try {
      return await this.inner.sendMessage(params, context);
    } catch (error) {
      throw this.formOf(error);
    }
  }

  override sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    // Opened at once, as every step opens the stream below it (`observed`, a2a/steps.ts).
    return this.reading(this.inner.sendMessageStream(params, context));
  }

  private async *reading(stream: AsyncGenerator<StreamResponse, void, undefined>) {
    try {
      yield* stream;
    } catch (error) {
      throw this.formOf(error);
    }
  }

  private formOf(error: unknown): unknown {
    return error instanceof UnavailableError ? error.inForm(this.binding) : error;
  }
}

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
