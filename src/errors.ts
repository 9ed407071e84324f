/**
 * The harness's one error family. Each error carries a stable string code; every boundary
 * (the A2A transports, the command line, a command reply) maps codes in one place of its own.
 * Messages are written for the person who will read them: what went wrong and what would work.
 * They never carry a stack trace, a file path or a secret.
 */
export type HarnessErrorCode =
  /** The configuration file breaks its schema (start-up). */
  | 'config_invalid'
  /** A file or folder the configuration names cannot be read or made (start-up). */
  | 'config_unreadable'
  /** A model that is not offered here was asked for. */
  | 'model_unknown'
  /** A model provider failed: refused, unreachable, timed out, or answered garbage. */
  | 'provider_failed'
  /** The store could not read or write. */
  | 'store_failed'
  /** The data folder cannot be made or written, or holds a file that is not the store's database (start-up). */
  | 'data_unusable'
  /** A message for a task whose turn is still running. */
  | 'turn_in_progress'
  /**
   * A write of a turn whose task another instance took over (this one stalled past its lease):
   * refused, the turn stops (`turn-fencing` in the README's "Several instances").
   */
  | 'turn_fenced'
  /** A message sent to be queued on a task whose queue is full (`queue.maxPerTask`). */
  | 'queue_full'
  /** A new push-notification config past `push.maxConfigsPerTask` or `push.maxConfigsPerUser`. */
  | 'push_configs_full'
  /** A message that would start a turn while this instance runs as many as it may (`maxTurnsInFlight`): retry later. */
  | 'turns_at_limit'
  /** A message that would start a turn while this instance drains (it is stopping): retry, on another instance. */
  | 'instance_draining'
  /** A request past the bound on requests in progress (`admission.maxRequestsInProgress`), refused before it is read: retry later. */
  | 'requests_at_limit'
  /** A request while the event loop lags past `admission.maxEventLoopDelayMs`, refused before it is read: retry later. */
  | 'event_loop_lagging'
  /** The bearer tokens are malformed (start-up). */
  | 'tokens_invalid'
  /** A task that does not exist, or that the caller may not see. */
  | 'task_not_found'
  /** A cancel of a task that has ended. */
  | 'task_not_cancelable'
  /** A request that needs a task still open (a subscription) for one that has ended. */
  | 'task_ended'
  /** An A2A 1.1 message whose `ifGenerationMatch` is not its task's generation: the task has moved on (issue 36). */
  | 'task_generation_mismatch'
  /** A request whose parameters break the schema (JSON-RPC's "invalid params"). */
  | 'params_invalid'
  /** A request that is not a request at all: a wrong envelope, body or path (JSON-RPC's "invalid request"). */
  | 'request_invalid'
  /** A request body that is not JSON, or a gRPC request that is not protobuf. */
  | 'request_unparsable'
  /** A request body over the size the server accepts. */
  | 'request_too_large'
  /** A request without a bearer token the server knows. */
  | 'unauthenticated'
  /** A bearer token that is a JWT this server does not accept: expired, for another audience or issuer, badly signed, malformed. */
  | 'token_invalid'
  /** A valid token without a scope the call needs (`auth.oidc.requiredScopes`, `methodScopes`). */
  | 'scope_insufficient'
  /** The identity provider's discovery document or keys cannot be read: a token cannot be checked now, retry later. */
  | 'identity_unavailable'
  /** A path that no route serves. */
  | 'route_unknown'
  /** A POST to the trigger URL of a hook its owner paused (`/schedule pause`, issue 39): nothing runs until it is resumed. */
  | 'hook_paused';

export class HarnessError extends Error {
  readonly code: HarnessErrorCode;
  /** What the wire's error details say besides the message (A2A's `ErrorInfo.metadata`): plain facts, never a secret. */
  readonly metadata?: Record<string, string>;

  constructor(
    code: HarnessErrorCode,
    message: string,
    options?: { cause?: unknown; metadata?: Record<string, string> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HarnessError';
    this.code = code;
    if (options?.metadata) this.metadata = options.metadata;
  }
}

export function isHarnessError(error: unknown): error is HarnessError {
  return error instanceof HarnessError;
}

/** Whether `error` is a harness error with `code`. */
export function hasErrorCode(error: unknown, code: HarnessErrorCode): error is HarnessError {
  return error instanceof HarnessError && error.code === code;
}

/** The refusal of a turn's write once another instance took its task over (its lease's epoch is passed). */
export function turnFencedError(taskId: string): HarnessError {
  return new HarnessError(
    'turn_fenced',
    `This turn of task ${taskId} was taken over by another instance while this one stalled; it stopped, and wrote nothing more. Read the task for how it went on.`,
  );
}

/** The refusal of a message whose task a turn holds (or whose queue is not empty). */
export function turnInProgress(taskId: string): HarnessError {
  return new HarnessError(
    'turn_in_progress',
    `A reply is still being written on task ${taskId}. Send your message again once it has finished, or /stop it first. Commands work meanwhile.`,
  );
}

/** The refusal of a turn while this instance drains: retryable, and a retry through a balancer lands on another instance. */
export function instanceDraining(): HarnessError {
  return new HarnessError(
    'instance_draining',
    'This server is shutting down and starts no new turn. Send the message again in a few seconds; another instance (or this one, restarted) takes it. Commands work meanwhile.',
  );
}

/**
 * The refusal of an A2A 1.1 message sent with `ifGenerationMatch: expected` to a task now at
 * `current` (A2A 1.1's TaskGenerationMismatchError; its metadata as the draft's example has it).
 */
export function generationMismatch(taskId: string, expected: number, current: number): HarnessError {
  return new HarnessError(
    'task_generation_mismatch',
    `Task generation mismatch: expected ${expected} but current generation is ${current}. Read the task again before sending.`,
    { metadata: { taskId, expectedGeneration: String(expected), currentGeneration: String(current) } },
  );
}
