/**
 * How tests wait: on an event first (an emitter's event, a stream's next item), and by polling
 * only where nothing announces the change. Every wait is bounded by `WAIT_MS`, generous for a
 * busy two-core machine: the bound is no claim about how long anything should take, it only
 * turns a hang into a failure naming what was awaited and the last value seen. A wait stops
 * when its `signal` aborts, and when the test that started it ends, so nothing keeps checking
 * after its test (a wait abandoned that way never settles).
 */
import { afterEach } from 'node:test';
import { setMaxListeners, type EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { inspect } from 'node:util';

/** The bound of every wait; well below the runner's per-file safety net (scripts/run-tests.mjs), so the wait's own failure shows. */
export const WAIT_MS = 60_000;
const POLL_MS = 20;

export interface WaitOptions {
  /** Ends the wait early, rejecting with the signal's reason. */
  signal?: AbortSignal;
  /** Replaces `WAIT_MS`, for a wait known to outlast it. */
  timeoutMs?: number;
  /** What to report as last seen when the bound passes (default: what the check last returned). */
  seen?: () => unknown;
}

/** What a check resolves with: anything but a falsy value. */
export type Found<T> = Exclude<Awaited<T>, undefined | null | false | 0 | ''>;

// Only in a test file's process: a program the tests start (the MCP fixture over stdio) imports
// this too, and a hook would make it print a test report on its standard output.
let testEnd = newTestEnd();
if (/\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) {
  afterEach(() => {
    testEnd.abort();
    testEnd = newTestEnd();
  });
}

/** Every wait of a test listens on it, any number at once (a soak's workers), each until it ends. */
function newTestEnd(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/**
 * Resolves with `check()` once it is truthy: checked now and after each `event` of `emitter`
 * (an event-first wait on state the event changes).
 */
export function waitFor<T>(
  what: string,
  emitter: EventEmitter,
  event: string | readonly string[],
  check: () => T,
  options: WaitOptions = {},
): Promise<Found<T>> {
  const events = typeof event === 'string' ? [event] : event;
  return bounded(what, options, (stop, seen) => {
    return new Promise<Found<T>>((resolve, reject) => {
      const off = () => events.forEach((name) => emitter.off(name, test));
      const test = () => {
        try {
          const value = check();
          seen(value);
          if (!value) return;
          off();
          resolve(value as Found<T>);
        } catch (error) {
          off();
          reject(error);
        }
      };
      events.forEach((name) => emitter.on(name, test));
      stop.addEventListener('abort', off);
      test();
    });
  });
}

/**
 * Reads `stream` until an item satisfies `match` and resolves with it; the stream stays open,
 * the items after it left for the caller to read.
 */
export function nextMatching<T>(
  what: string,
  stream: AsyncIterable<T>,
  match: (item: T) => boolean,
  options: WaitOptions = {},
): Promise<T> {
  const items = stream[Symbol.asyncIterator]();
  return bounded(what, options, async (stop, seen) => {
    while (!stop.aborted) {
      const next = await items.next();
      if (next.done) throw new Error(`${what}: the stream ended first (last seen: ${show(next.value)})`);
      seen(next.value);
      if (match(next.value)) return next.value;
    }
    return new Promise<never>(() => {});
  });
}

/** Checks `check` every few ms until it is truthy, for state nothing announces; resolves with it. */
export function poll<T>(what: string, check: () => T, options: WaitOptions = {}): Promise<Found<T>> {
  return bounded(what, options, async (stop, seen) => {
    for (;;) {
      const value = await check();
      seen(value);
      if (value) return value as Found<T>;
      await delay(POLL_MS, undefined, { signal: stop, ref: false });
    }
  });
}

/** `promise`, bounded like any wait. */
export function within<T>(what: string, promise: Promise<T>, options: WaitOptions = {}): Promise<T> {
  return bounded(what, options, () => promise);
}

/**
 * Runs `body` to its end, unless the bound passes (failing with `what` and the last value seen),
 * `options.signal` aborts (failing with its reason) or the test ends (never settling). `stop`
 * tells `body` to leave off in every one of those cases.
 */
function bounded<T>(
  what: string,
  options: WaitOptions,
  body: (stop: AbortSignal, seen: (value: unknown) => void) => Promise<T>,
): Promise<T> {
  const ms = options.timeoutMs ?? WAIT_MS;
  const stop = new AbortController();
  const ended = testEnd.signal;
  let last: unknown;
  let checked = false;
  return new Promise<T>((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      ended.removeEventListener('abort', finish);
      options.signal?.removeEventListener('abort', aborted);
      stop.abort();
    };
    const aborted = () => (finish(), reject(options.signal!.reason));
    const timer = setTimeout(() => {
      finish();
      const seen = options.seen ? show(options.seen()) : checked ? show(last) : 'nothing';
      reject(
        new Error(`${what}: not so after ${ms} ms (the bound of a wait, not of the behaviour); last seen: ${seen}`),
      );
    }, ms);
    if (options.signal?.aborted) return aborted();
    options.signal?.addEventListener('abort', aborted, { once: true });
    ended.addEventListener('abort', finish, { once: true });
    body(stop.signal, (value) => ((last = value), (checked = true))).then(
      (value) => stop.signal.aborted || (finish(), resolve(value)),
      (error) => stop.signal.aborted || (finish(), reject(error)),
    );
  });
}

function show(value: unknown): string {
  return inspect(value, { depth: 3, breakLength: Infinity }).slice(0, 500);
}
