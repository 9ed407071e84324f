import type { Message, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { A2AError } from '@a2a-js/sdk/errors';
import type { RequestHandler } from 'express';
import { DelegatingRequestHandler } from '../a2a/index.js';

/**
 * A refusal to retry: the server cannot take the request now, but will soon (its turns are at
 * their limit). A2A 1.0 has no error type of its own for it: spec 3.3.2 files it under system
 * errors of "temporary unavailability", whose forms are HTTP 503 with Retry-After, gRPC
 * UNAVAILABLE and JSON-RPC -32603.
 *
 * The SDK's transports pick the code from the error's class and know none for this one.
 * JSON-RPC answers -32603 for it by itself, in an HTTP 503 ({@link retryableRefusalAnswers}). HTTP+JSON and gRPC take the code an error of their
 * own transport carries (`transport`, with `statusCode` or `status`), so each of them is handed
 * the error in its own form ({@link UnavailableForm}), and the HTTP+JSON answer gets its
 * Retry-After header and its status name ({@link unavailableAnswers}). This file is the one
 * place that works around the SDK for it (test/server/unavailable.test.ts pins it).
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
 * The handler as the HTTP+JSON or the gRPC transport is given it: an {@link UnavailableError}
 * leaves it in that transport's form. Only sending a message can be refused so.
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

/**
 * For the HTTP+JSON routes: a 503 answer (only an {@link UnavailableError} leads to one) gets
 * `Retry-After`, and its body the status name of its code, UNAVAILABLE (spec 11.6, AIP-193),
 * where the SDK, knowing no class for it, writes UNKNOWN.
 */
export function unavailableAnswers(): RequestHandler {
  return (_req, res, next) => {
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      if (res.statusCode === HTTP_SERVICE_UNAVAILABLE) {
        res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
        const error = (body as { error?: { status?: unknown } } | undefined)?.error;
        if (error) error.status = UNAVAILABLE_STATUS;
      }
      return json(body);
    };
    next();
  };
}

const UNAVAILABLE_STATUS = 'UNAVAILABLE';

/** An HTTP+JSON error body as {@link unavailableAnswers} sends it: a 503's status name is UNAVAILABLE. */
export function unavailableBody<T extends { error: { code: number; status: string } }>(body: T): T {
  if (body.error.code === HTTP_SERVICE_UNAVAILABLE) body.error.status = UNAVAILABLE_STATUS;
  return body;
}

/** Whether a JSON-RPC `error` is a refusal a balancer should retry elsewhere: its detail's reason is UNAVAILABLE (`UnavailableError`). */
export function isRetryableRefusal(error: unknown): boolean {
  const data = (error as { data?: unknown } | null | undefined)?.data;
  return Array.isArray(data) && data.some((detail) => (detail as { reason?: unknown })?.reason === UNAVAILABLE_STATUS);
}

/**
 * For the JSON-RPC route: an answer whose body is a retryable refusal (this instance drains, or is
 * at its bound on turns) leaves as HTTP 503 with `Retry-After`, the JSON-RPC error as its body,
 * so that a balancer retries it on another instance (A2A 1.0 section 3.3.2 gives a temporary
 * unavailability HTTP 503 with Retry-After). The SDK's JSON-RPC handler answers every error with
 * 200, and is told the status here, at the one place the answer is written. Every other JSON-RPC
 * error stays a 200; so does a refusal inside a stream already under way (its status is sent).
 */
export function retryableRefusalAnswers(): RequestHandler {
  return (_req, res, next) => {
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      if (!res.headersSent && isRetryableRefusal((body as { error?: unknown } | undefined)?.error)) {
        res.status(HTTP_SERVICE_UNAVAILABLE);
        res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
      }
      return json(body);
    };
    next();
  };
}
