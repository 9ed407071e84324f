/**
 * Where OpenTelemetry's failures go: its SDK reports a failed export (an endpoint that refuses
 * the connection, a collector answering 401) to its global error handler, which hands it to the
 * `diag` logger, and with none set said nothing at all: traces to a dead endpoint were lost
 * without a line. They go to the harness's log now, as a warning, and at most one a minute
 * after the first, saying how many more failed meanwhile: an endpoint that stays down fails
 * every batch.
 */
import type { DiagLogger } from '@opentelemetry/api';
import { describeError, type Logger } from '../log.js';

/** After a failure is logged, others are counted, not logged, for this long. */
export const FAILURE_LOG_INTERVAL_MS = 60_000;

export interface FailureLogOptions {
  intervalMs?: number;
  /** A clock in milliseconds (a test's own). */
  now?: () => number;
}

/** A `diag` logger for `diag.setLogger`: errors to `log`, throttled; OpenTelemetry's chatter below that, dropped. */
export function exportFailureLog(log: Logger, options: FailureLogOptions = {}): DiagLogger {
  const { intervalMs = FAILURE_LOG_INTERVAL_MS, now = () => performance.now() } = options;
  let loggedAt: number | undefined;
  let unlogged = 0;
  const failed = (...args: unknown[]) => {
    const at = now();
    if (loggedAt !== undefined && at - loggedAt < intervalMs) {
      unlogged++;
      return;
    }
    log.warn('exporting traces failed: spans are dropped until the OTLP endpoint answers', {
      error: oneLine(args),
      ...(unlogged > 0 && { moreFailures: unlogged }),
    });
    loggedAt = at;
    unlogged = 0;
  };
  const dropped = () => {};
  return { error: failed, warn: dropped, info: dropped, debug: dropped, verbose: dropped };
}

/**
 * What failed, in one line: OpenTelemetry hands over the error as JSON of its fields (its stack
 * included), or a message and arguments; the name, code and message only, through
 * {@link describeError} (no path, no secret).
 */
function oneLine(args: unknown[]): string {
  const [first, ...rest] = args;
  if (typeof first === 'string' && first.startsWith('{')) {
    try {
      const { name, code, message } = JSON.parse(first) as { name?: string; code?: string; message?: string };
      if (message !== undefined) return describeError(`${name ?? 'Error'}${code ? ` ${code}` : ''}: ${message}`);
    } catch {
      // Not JSON after all: described as it is.
    }
  }
  return describeError(
    [first, ...rest].map((arg) => (arg instanceof Error ? describeError(arg) : String(arg))).join(' '),
  );
}
