/**
 * The steps around a call: one signature, `around(call, next)`, composed from an ordered list
 * as Hono composes its middleware. A call is a plain value (the A2A method, its params, the
 * call's context, and whether it streams); `next` runs the rest of the list, down to whatever
 * answers the call, and returns a promise of the result or, for a streaming call, its events.
 */
import type { StreamResponse } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';

/** The calls a client makes. The agent card is none: its route serves it (`server/card-route.ts`). */
export type CallMethod = Exclude<keyof A2ARequestHandler, 'getAgentCard'>;

/** The methods whose answer is a stream of events. */
export type StreamingMethod = 'sendMessageStream' | 'resubscribe';

/** The events of a streaming call. */
export type Stream = AsyncGenerator<StreamResponse, void, undefined>;

/** One call of `method`. */
export interface CallOf<M extends CallMethod> {
  method: M;
  params: Parameters<A2ARequestHandler[M]>[0];
  /** The user, the requested extensions, and the `state` a transport filled (trace, client gone). */
  context: ServerCallContext;
  /** True for the methods whose answer is a stream of events. */
  streaming: M extends StreamingMethod ? true : false;
}

/** Any call: switch on `method` to read its params with their type. */
export type Call = { [M in CallMethod]: CallOf<M> }[CallMethod];

/** What `next` gives for `call`: a promise of its result, or its events for a streaming call. */
export type OutcomeOf<C extends Call> = ReturnType<A2ARequestHandler[C['method']]>;

/** A promise of a call's result, or a streaming call's events. */
export type Outcome = Promise<unknown> | Stream;

/**
 * Runs the rest of the path: with no argument, for the call the step was given; with one, for
 * that call instead (another method's, say: a blocking send served from its stream), which then
 * passes the steps below this one that take its method. Each call of `next` runs the rest once.
 * For a streaming call the events are opened at once, not on their first read: a step below may
 * act before the transport writes its headers (the commands step activates its extension).
 */
export interface Next {
  (): Outcome;
  <C extends Call>(call: C): OutcomeOf<C>;
}

/** One step of the path. */
export interface Step {
  /** Its name in the printed order. */
  name: string;
  /** The methods it does something for; a call of another method goes past it. Default: every one. */
  methods?: readonly CallMethod[];
  /** Does its part around `next`, or answers the call itself and never calls `next`. */
  around(call: Call, next: Next): Outcome;
}

/** Every call method: a record, so that a method the SDK adds fails to compile until listed. */
export const CALL_METHODS = Object.keys({
  getAuthenticatedExtendedAgentCard: 0,
  sendMessage: 0,
  sendMessageStream: 0,
  getTask: 0,
  listTasks: 0,
  cancelTask: 0,
  resubscribe: 0,
  createTaskPushNotificationConfig: 0,
  getTaskPushNotificationConfig: 0,
  listTaskPushNotificationConfigs: 0,
  deleteTaskPushNotificationConfig: 0,
} satisfies Record<CallMethod, 0>) as CallMethod[];

/** The composed path: run a call through it, and read its order. */
export interface ComposedSteps {
  /** Runs `call` through every step that takes its method, in order, then the terminal. */
  run<C extends Call>(call: C): OutcomeOf<C>;
  /** The steps' names, outermost first. */
  order: readonly string[];
  /** The steps a call of `method` passes, outermost first. */
  pathOf(method: CallMethod): readonly string[];
}

/**
 * Composes `steps` (outermost first) around `terminal`, which answers what passes them all.
 * For each method, the index of the next step at or after each position that takes it is
 * worked out once here, so that a call meets only its own steps, and no wrapper for the others.
 */
export function compose(steps: readonly Step[], terminal: (call: Call) => Outcome): ComposedSteps {
  const names = new Set<string>();
  for (const { name } of steps) {
    if (names.has(name)) throw new Error(`Two steps of the request path are named ${name}.`);
    names.add(name);
  }
  const nextTaking = {} as Record<CallMethod, number[]>;
  for (const method of CALL_METHODS) {
    const table = new Array<number>(steps.length + 1).fill(steps.length);
    for (let i = steps.length - 1; i >= 0; i--) table[i] = takes(steps[i]!, method) ? i : table[i + 1]!;
    nextTaking[method] = table;
  }
  const dispatch = (from: number, call: Call): Outcome => {
    const at = nextTaking[call.method][from]!;
    if (at === steps.length) return terminal(call);
    return steps[at]!.around(call, ((next?: Call) => dispatch(at + 1, next ?? call)) as Next);
  };
  return {
    run: <C extends Call>(call: C) => dispatch(0, call) as OutcomeOf<C>,
    order: steps.map((step) => step.name),
    pathOf: (method) => steps.filter((step) => takes(step, method)).map((step) => step.name),
  };
}

function takes(step: Step, method: CallMethod): boolean {
  return !step.methods || step.methods.includes(method);
}

/** The terminal that hands each call to `handler`'s method of the same name. */
export function handlerTerminal(handler: A2ARequestHandler): (call: Call) => Outcome {
  return (call) =>
    (handler[call.method] as (params: unknown, context: ServerCallContext) => Outcome).call(
      handler,
      call.params,
      call.context,
    );
}

/** What {@link observed} tells a step of the call it wraps. */
export interface Observer {
  /** A stream was read for the first time (a stream never read never ran, and never ends). */
  opened?(): void;
  /** The call ended: its result came, or its stream ended or was left; `failure` when it failed. */
  ended?(failure?: unknown): void;
  /** The call failed: the error to throw instead. */
  failed?(error: unknown): unknown;
}

/**
 * Runs `open` (the step's `next`) and tells `observer` how it goes, for either kind of call: a
 * step that times, counts or maps errors needs no code of its own per kind. A call that is not
 * streaming always answers with a promise, even when `open` throws; a streaming one throws at
 * once if `open` does, as the stream below it would.
 */
export function observed(call: Call, open: () => Outcome, observer: Observer): Outcome {
  const fail = (error: unknown) => {
    observer.ended?.(error);
    return observer.failed ? observer.failed(error) : error;
  };
  if (call.streaming) {
    let stream: Stream;
    try {
      stream = open() as Stream;
    } catch (error) {
      throw fail(error);
    }
    return observedStream(stream, observer, fail);
  }
  let result: Promise<unknown>;
  try {
    result = open() as Promise<unknown>;
  } catch (error) {
    return Promise.reject(fail(error));
  }
  return result.then(
    (value) => {
      observer.ended?.();
      return value;
    },
    (error) => {
      throw fail(error);
    },
  );
}

async function* observedStream(stream: Stream, observer: Observer, fail: (error: unknown) => unknown): Stream {
  observer.opened?.();
  let failed = false;
  try {
    yield* stream;
  } catch (error) {
    failed = true;
    throw fail(error);
  } finally {
    // Ended, or left early by its reader: nothing failed.
    if (!failed) observer.ended?.();
  }
}
