import type {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { A2AError, RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { DelegatingRequestHandler } from '../commands/index.js';
import { isHarnessError, type HarnessErrorCode } from '../errors.js';
import { UnavailableError } from './unavailable.js';

/** What a client is told of a failure that is the server's own: the details go to the log only. */
export const INTERNAL_ERROR_MESSAGE = 'Internal error; the server logged it.';

/**
 * The one table from harness errors to A2A errors. The SDK turns each A2A error into its
 * transport's code (JSON-RPC code, HTTP status, gRPC status), so this is the only place that
 * decides what a harness failure means on the wire. `internal` errors are the server's own
 * business: the client gets {@link INTERNAL_ERROR_MESSAGE} and the log gets the reason.
 */
const A2A_ERROR_FOR: Record<HarnessErrorCode, ((message: string) => A2AError) | 'internal'> = {
  // A2A has no "busy" error; UnsupportedOperation is its "not in this state" (gRPC and REST
  // FAILED_PRECONDITION), as the SDK answers a message to a finished task.
  turn_in_progress: (message) => new UnsupportedOperationError(message),
  // Temporary and retryable: HTTP 503 with Retry-After, gRPC UNAVAILABLE, JSON-RPC -32603 (spec 3.3.2; unavailable.ts).
  turns_at_limit: (message) => new UnavailableError(message),
  model_unknown: (message) => new RequestMalformedError(message),
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
 * internal: its message may hold a path, a stack or a secret, and never reaches a client.
 */
export function toA2AError(error: unknown): { error: A2AError; internal?: unknown } {
  if (error instanceof A2AError) return { error };
  if (isHarnessError(error)) {
    const build = A2A_ERROR_FOR[error.code];
    if (build !== 'internal') return { error: build(error.message) };
  }
  return { error: new A2AError(INTERNAL_ERROR_MESSAGE), internal: error };
}

/**
 * The outermost request handler: every error any call raises leaves as an A2A error, through
 * {@link toA2AError}, and an internal one is reported to `onInternal` (the log) first.
 */
export class A2AErrorMapping extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly onInternal: (error: unknown, method: string) => void,
  ) {
    super(inner);
  }

  override sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return this.mapped('SendMessage', () => this.inner.sendMessage(params, context));
  }

  override sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.mappedStream('SendStreamingMessage', () => this.inner.sendMessageStream(params, context));
  }

  override getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.mapped('GetTask', () => this.inner.getTask(params, context));
  }

  override listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.mapped('ListTasks', () => this.inner.listTasks(params, context));
  }

  override cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.mapped('CancelTask', () => this.inner.cancelTask(params, context));
  }

  override resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.mappedStream('SubscribeToTask', () => this.inner.resubscribe(params, context));
  }

  private async mapped<T>(method: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.translate(error, method);
    }
  }

  /**
   * The inner stream is opened at once, not on the first read: wrappers do synchronous work
   * there (activating an extension) that must happen before a transport writes its headers.
   */
  private mappedStream(
    method: string,
    open: () => AsyncGenerator<StreamResponse, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    let stream: AsyncGenerator<StreamResponse, void, undefined>;
    try {
      stream = open();
    } catch (error) {
      throw this.translate(error, method);
    }
    return this.reading(stream, method);
  }

  private async *reading(
    stream: AsyncGenerator<StreamResponse, void, undefined>,
    method: string,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      yield* stream;
    } catch (error) {
      throw this.translate(error, method);
    }
  }

  private translate(error: unknown, method: string): A2AError {
    const mapped = toA2AError(error);
    if (mapped.internal !== undefined) this.onInternal(mapped.internal, method);
    return mapped.error;
  }
}
