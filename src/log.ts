/**
 * The harness's log: one JSON object per line on standard error (`{"time", "level", "msg",
 * ...fields}`), so standard output stays free for what a user or a script reads (the
 * `listening on` line). Lines never carry a stack trace, a
 * file path or a secret: errors are logged through {@link describeError}.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(write: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Logger {
  const emit = (level: string, message: string, fields?: Record<string, unknown>) => {
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level, msg: message };
    for (const [key, value] of Object.entries(fields ?? {})) {
      if (value === undefined || key in entry) continue;
      entry[key] = value instanceof Error ? describeError(value) : value;
    }
    write(safeJson(entry));
  };
  return {
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
  };
}

/** A logger that drops everything: for tests and embedding. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

const PATH_PATTERN = /(?:[A-Za-z]:)?(?:\/[\w.@+-]+){2,}\/?/g;
const SECRET_PATTERN = /\b(sk-[\w-]{8,}|(?:api[_-]?key|token|secret|password)=\S+)/gi;

/** One line about an error: its name and message, with paths and anything key-shaped removed. */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split('\n')[0]!.replace(PATH_PATTERN, '<path>').replace(SECRET_PATTERN, '<redacted>').slice(0, 300);
}

/**
 * Sends `console.error` and `console.warn` through the log. Libraries (the A2A SDK among them)
 * print whole error objects there, stack traces and request bodies included; the server's log
 * keeps one line per call, each error reduced by {@link describeError}. Used by the command
 * line only: a program embedding the harness keeps its console as it is.
 */
export function routeConsoleToLog(log: Logger): void {
  const line = (args: unknown[]) =>
    args
      .map((arg) => (arg instanceof Error ? describeError(arg) : typeof arg === 'string' ? describeError(arg) : describeError(safeJson(arg))))
      .join(' ');
  console.error = (...args: unknown[]) => log.error(line(args));
  console.warn = (...args: unknown[]) => log.warn(line(args));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
