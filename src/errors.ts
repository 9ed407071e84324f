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
  /** A message that would start a turn while this instance runs as many as it may (`maxTurnsInFlight`): retry later. */
  | 'turns_at_limit'
  /** The bearer tokens are malformed (start-up). */
  | 'tokens_invalid';

export class HarnessError extends Error {
  readonly code: HarnessErrorCode;

  constructor(code: HarnessErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HarnessError';
    this.code = code;
  }
}

export function isHarnessError(error: unknown): error is HarnessError {
  return error instanceof HarnessError;
}
