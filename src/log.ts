/**
 * The harness's log, written by pino on standard error, so standard output stays free for what
 * a user or a script reads (the `listening on` line). Where standard error is a terminal, a
 * line is short and human (`[12:00:01] INFO: listening {"url":"…"}`, by pino-pretty); anywhere
 * else it is one JSON object per line (`{"level", "time", "msg", ...fields}`) for a log
 * collector. Lines never carry a stack trace, a file path or a secret: errors are logged
 * through {@link describeError}.
 */
import { pino, stdTimeFunctions, type Logger as Pino } from 'pino';
import { createRequire } from 'node:module';

export interface Logger {
  /** Written only when the log's level is `debug` (`TINY_HARNESS_LOG_LEVEL=debug` for the command line). */
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface LogOptions {
  /** Where each line goes (without its newline); standard error by default. */
  write?: (line: string) => void;
  /** Human lines instead of JSON; by default, when standard error is a terminal. */
  pretty?: boolean;
  /** Colors in human lines; by default, unless `NO_COLOR` is set. */
  colors?: boolean;
  /** The least level written: `info` by default, `debug` for more. */
  level?: 'info' | 'debug';
}

/** The keys pino writes itself: a field of the same name is dropped, not allowed to replace them. */
const OWN_KEYS = new Set(['time', 'level', 'msg']);

/** A logger; `createLogger(write)` is short for `createLogger({ write })`. */
export function createLogger(options: LogOptions | ((line: string) => void) = {}): Logger {
  const {
    write = (line: string) => process.stderr.write(`${line}\n`),
    pretty = process.stderr.isTTY === true,
    colors = !process.env.NO_COLOR,
    level = 'info',
  } = typeof options === 'function' ? { write: options } : options;
  const human = pretty
    ? loadPrettyFactory()({
        colorize: colors,
        singleLine: true,
        translateTime: 'SYS:HH:MM:ss',
        ignore: 'pid,hostname',
        errorLikeObjectKeys: [],
      })
    : undefined;
  // A synchronous destination: a line is written before the call returns, so none is lost when the process exits.
  const destination = { write: (line: string) => write((human ? human(line) : line).trimEnd()) };
  const logger: Pino = pino(
    {
      level,
      base: null,
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  const emit = (at: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => {
    const entry: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields ?? {})) {
      if (value === undefined || OWN_KEYS.has(key)) continue;
      entry[key] = value instanceof Error ? describeError(value) : value;
    }
    logger[at](entry, message);
  };
  const log: Logger = {
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
  };
  pinos.set(log, logger);
  return log;
}

/** The pino logger under each logger `createLogger` made, or made for another by `pinoFor`. */
const pinos = new WeakMap<Logger, Pino>();

/**
 * A pino logger that writes through `log`, for a library that takes one (pino-http): the one
 * under a logger of `createLogger`, so its lines cost no more than the harness's own; for any
 * other logger, one that hands each line to it, parsed, at its level.
 */
export function pinoFor(log: Logger): Pino {
  let logger = pinos.get(log);
  if (!logger) {
    const levels = new Set(['debug', 'info', 'warn', 'error']);
    const forward = (line: string) => {
      const { level, msg, ...fields } = JSON.parse(line) as Record<string, unknown>;
      const at = levels.has(level as string) ? (level as 'debug' | 'info' | 'warn' | 'error') : 'error';
      log[at](String(msg ?? ''), fields);
    };
    logger = pino(
      {
        level: log === silentLogger ? 'silent' : 'debug',
        base: null,
        timestamp: false,
        formatters: { level: (label) => ({ level: label }) },
      },
      { write: forward },
    );
    pinos.set(log, logger);
  }
  return logger;
}

/** pino-pretty, loaded only for a terminal: a service's log (JSON) never needs it. */
function loadPrettyFactory(): typeof import('pino-pretty').prettyFactory {
  return (createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty')).prettyFactory;
}

/** A logger that drops everything: for tests and embedding. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

const PATH_PATTERN = /(?:[A-Za-z]:)?(?:\/[\w.@+-]+){2,}\/?/g;

/** A URL's user and password: `https://user:pw@host` keeps `https://` and `@host`. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi;
/** The credentials of an `Authorization` value: `Bearer …`, `Basic …`. */
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[\w.~+/=*-]*[\w~+/=*]/gi;
/** A value named as a secret: `key=…`, `api_key=…`, `client_secret=…`, `"access_token": "…"`. */
const NAMED_SECRET = /\b([\w-]*(?:key|token|secret|password)(?:=|["']\s*:\s*["']))[^\s"'&,;})]+/gi;
/** Keys by their providers' prefixes (`sk-…`, `sk-ant-…`, `gsk_…`, `AIza…`, `AKIA…`), masked parts (`*`, `...`) included, a full stop after them not. */
const KEY_PREFIX =
  /\b(?:(?:sk|pk|rk|gsk|xai|hf|ghp|gho|ghs|github_pat|glpat|pplx|fw)[-_][\w*.-]{5,}[\w*]|AIza[\w-]{20,}|AKIA[0-9A-Z]{16})/g;
/** Any other long opaque token of letters and digits: 24 characters or more, with both. */
const OPAQUE_TOKEN = /\b(?=\w*\d)(?=\w*[A-Za-z])\w{24,}/g;

/**
 * `text` with anything secret-shaped replaced by `[redacted]`: API keys, bearer and basic
 * credentials, values named `key`, `token`, `password`..., a URL's user and password, and long
 * opaque tokens. The rest stays as it was, so that a provider's error text still says what is
 * wrong. Every text of someone else's that reaches a reply or a log line passes here.
 */
export function redactSecrets(text: string): string {
  return text
    .replace(URL_CREDENTIALS, '$1[redacted]@')
    .replace(AUTH_SCHEME, '$1 [redacted]')
    .replace(NAMED_SECRET, '$1[redacted]')
    .replace(KEY_PREFIX, '[redacted]')
    .replace(OPAQUE_TOKEN, '[redacted]');
}

/** One line about an error: its name and message, with paths and anything secret-shaped removed. */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return redactSecrets(text.split('\n')[0]!).replace(PATH_PATTERN, '<path>').slice(0, 300);
}

/**
 * Sends `console.error` and `console.warn` through the log. Libraries (the A2A SDK among them)
 * print whole error objects there, stack traces and request bodies included; the server's log
 * keeps one line per call, each error reduced by {@link describeError}. A line about an error
 * that `isAnswer` recognizes (a retryable refusal, which the SDK prints for every JSON-RPC
 * stream refused before its first event) is written at debug: the client was answered, and the
 * metrics count it. Used by the command line only: a program embedding the harness keeps its
 * console as it is.
 */
export function routeConsoleToLog(log: Logger, isAnswer: (arg: unknown) => boolean = () => false): void {
  const line = (args: unknown[]) =>
    args
      .map((arg) =>
        arg instanceof Error
          ? describeError(arg)
          : typeof arg === 'string'
            ? describeError(arg)
            : describeError(safeJson(arg)),
      )
      .join(' ');
  console.error = (...args: unknown[]) => (args.some(isAnswer) ? log.debug : log.error)(line(args));
  console.warn = (...args: unknown[]) => (args.some(isAnswer) ? log.debug : log.warn)(line(args));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
