/**
 * The harness's one error family. Each error carries a stable string code; every boundary
 * (the A2A transports, the command line, a command reply) maps codes in one place of its own.
 * Messages are written for the person who will read them: what went wrong and what would work.
 * They never carry a stack trace, a file path or a secret.
 */
export type HarnessErrorCode =
  | 'config_invalid'
  | 'config_unreadable'
  | 'model_unknown'
  | 'model_unavailable'
  | 'provider_failed'
  | 'store_failed'
  | 'command_invalid'
  | 'command_failed'
  | 'turn_in_progress'
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
