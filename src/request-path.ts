import type { AgentCard } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  type A2ARequestHandler,
  type AgentExecutor,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { CommandsRequestHandler, withCommandsExtension, type CommandRegistry } from './commands/index.js';
import type { DelegatingRequestHandler, MessageClaims } from './a2a/index.js';
import { describeError, type Logger } from './log.js';
import { BlockingSendAsStream } from './runtime/blocking-send.js';
import type { TaskEngine } from './runtime/engine.js';
import { MessageIdempotency } from './runtime/message-idempotency.js';
import { SingleTurnGuard } from './runtime/single-turn-guard.js';
import { Subscriptions } from './runtime/subscriptions.js';
import { TaskCancellation } from './runtime/task-cancellation.js';
import type { TaskStateStore } from './runtime/task-state.js';
import { TrackedTurns } from './runtime/tracked-turns.js';
import type { TurnLimit } from './runtime/turn-limit.js';
import { A2AErrorMapping } from './server/a2a-errors.js';
import { TransportCardCache } from './server/transport-card.js';

/** One step of the request path: a handler built around the path below it, and its name in the printed order. */
export interface Interceptor {
  name: string;
  around(below: A2ARequestHandler): DelegatingRequestHandler;
}

export interface RequestPathOptions {
  engine: TaskEngine;
  executor: AgentExecutor;
  /** The task store every step reads and writes tasks through (the harness's view). */
  taskStore: TaskStore;
  /** The record of handled message ids, for commands and turns alike (CMD-34). */
  claims: MessageClaims;
  links: Pick<TaskStateStore, 'getLinks'>;
  /** The most turns in flight here; every turn, the harness's own included, takes a place. None: no bound. */
  limit?: TurnLimit;
  registry: CommandRegistry;
  /** The card as it stands now, before the commands extension's entry is added. */
  card: () => AgentCard;
  log: Logger;
}

/** Where the harness's own turns enter the path: below the message claims (the ids are the harness's own). */
export const HARNESS_TURNS_ENTRY = 'singleTurn';
/** Where the card's route reads the card: below the transports' cache, so that it is built per request (CMD-16). */
export const CARD_ROUTE_ENTRY = 'commands';

/**
 * The request path, outermost first, in the order a request goes through it:
 * - `errorMapping`: whatever fails below leaves as an A2A error, an internal one logged;
 * - `transportCard`: the transports' per-call card checks get the first card built;
 * - `commands`: a command message is answered by the commands extension and goes no further;
 * - `blockingAsStream`: a blocking send runs as a stream from here down (cheaper, and a shutdown can wait for it);
 * - `idempotency`: a message id is handled once per user (CMD-34);
 * - `subscriptions`: `SubscribeToTask` from the engine's buses, across instances (CMD-8);
 * - `singleTurn`: one turn per task, across instances, refused clearly otherwise; the harness's
 *   own turns (sub-tasks, a turn resumed after approval) enter here;
 * - `cancellation`: `CancelTask` is the engine's (`engine.cancel`), cascading to sub-tasks (CMD-31);
 * - `trackedTurns`: a turn's stream is work under way until stored, for `drain`;
 * then the SDK's `DefaultRequestHandler`, on the engine's buses, running the executor.
 * A call passes only the steps that do something for its method (`compose`).
 */
export function requestPathSteps(options: RequestPathOptions): {
  interceptors: Interceptor[];
  sdk: A2ARequestHandler;
} {
  const { engine, taskStore, claims, registry, log } = options;
  const warn = (what: string) => (error: unknown) => log.warn(what, { error: describeError(error) });
  const interceptors: Interceptor[] = [
    {
      name: 'errorMapping',
      around: (below) =>
        new A2AErrorMapping(below, (error, method) =>
          log.error('request failed', { rpc: method, error: describeError(error) }),
        ),
    },
    { name: 'transportCard', around: (below) => new TransportCardCache(below) },
    {
      name: 'commands',
      around: (below) =>
        new CommandsRequestHandler(below, {
          registry,
          port: engine,
          claims,
          baseCard: options.card,
          onHandlerError: (error, command) =>
            log.error('command handler failed', { command, error: describeError(error) }),
          onStreamError: warn('a turn stream failed after its client went away'),
        }),
    },
    {
      name: 'blockingAsStream',
      around: (below) => new BlockingSendAsStream(below, warn('a turn stream failed after its answer was sent')),
    },
    {
      name: 'idempotency',
      around: (below) =>
        new MessageIdempotency(below, {
          claims,
          taskStore,
          engine,
          onClaimError: (error, task) =>
            log.warn('a message id could not be recorded as handled', { task, error: describeError(error) }),
        }),
    },
    { name: 'subscriptions', around: (below) => new Subscriptions(below, { taskStore, engine }) },
    {
      name: 'singleTurn',
      around: (below) => new SingleTurnGuard(below, engine, visibleIn(taskStore), options.limit),
    },
    {
      name: 'cancellation',
      around: (below) =>
        new TaskCancellation(below, engine, options.links, (error, child) =>
          log.warn('could not cancel a sub-task of a canceled task', { task: child, error: describeError(error) }),
        ),
    },
    {
      name: 'trackedTurns',
      around: (below) =>
        new TrackedTurns(
          below,
          engine,
          (error, what, task) => log.warn(`${what} failed`, { task, error: describeError(error) }),
          (task, epoch) =>
            log.warn(
              'a turn was fenced: another instance took its task over while this one stalled past its lease; the turn stopped and wrote nothing more',
              { task, epoch },
            ),
        ),
    },
  ];
  // The SDK handler's own copy of the card only serves its capability checks.
  const sdk = new DefaultRequestHandler(
    withCommandsExtension(options.card(), registry),
    taskStore,
    options.executor,
    engine.buses,
  );
  return { interceptors, sdk };
}

export interface RequestPath extends ComposedPath {
  /** The card as its route serves it: built on every call (CMD-16). */
  card: () => Promise<AgentCard>;
  /** Where the harness starts turns of its own, as streams: at {@link HARNESS_TURNS_ENTRY}. */
  harnessTurns: Pick<A2ARequestHandler, 'sendMessageStream'>;
  /**
   * As `harnessTurns`, for a turn resumed after `/approve` or `/deny`: counted under the turn
   * limit, never refused by it (its answers are stored already; `TurnLimit.takePastLimit`).
   */
  resumedTurns: Pick<A2ARequestHandler, 'sendMessageStream'>;
}

/** The request path the harness serves; the transports are given `handler`. */
export function buildRequestPath(options: RequestPathOptions): RequestPath {
  const { interceptors, sdk } = requestPathSteps(options);
  const path = compose(interceptors, sdk);
  const { limit, engine, taskStore } = options;
  const pastLimit = limit && { take: () => limit.takePastLimit() };
  return {
    ...path,
    card: path.from(CARD_ROUTE_ENTRY).getAgentCard,
    harnessTurns: path.from(HARNESS_TURNS_ENTRY),
    // The same step as `singleTurn`, at the same place, but past the limit.
    resumedTurns: new SingleTurnGuard(
      path.from(stepAfter(path.order, HARNESS_TURNS_ENTRY)),
      engine,
      visibleIn(taskStore),
      pastLimit,
    ),
  };
}

/** Whether the caller may see the task (a message to another user's task is refused as not found first). */
function visibleIn(taskStore: TaskStore) {
  return async (id: string, context: ServerCallContext) => (await taskStore.load(id, context)) !== undefined;
}

/** The name of the step right below `name`. */
function stepAfter(order: readonly string[], name: string): string {
  const next = order[order.indexOf(name) + 1];
  if (next === undefined) throw new Error(`The request path has no step below ${name}.`);
  return next;
}

type Method = keyof A2ARequestHandler;

/** Every method of the SDK's handler: a record, so that a method the SDK adds fails to compile until listed. */
export const REQUEST_METHODS = Object.keys({
  getAgentCard: 0,
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
} satisfies Record<Method, 0>) as Method[];

export interface ComposedPath {
  /** The whole path, from its first interceptor. */
  handler: A2ARequestHandler;
  /** The interceptors' names, outermost first. */
  order: readonly string[];
  /** The path from the interceptor named `name`, included, down. */
  from(name: string): A2ARequestHandler;
  /** The interceptors a call of `method` passes through, outermost first. */
  pathOf(method: Method): readonly string[];
}

/**
 * Builds `interceptors` (outermost first) around `terminal`. Each one is given, as the path
 * below it, a handler whose every method goes straight to the next interceptor that does
 * something for that method ({@link DelegatingRequestHandler.intercepts}): a call passes each
 * step once at most, and never through one that would only hand it on. So a task read made
 * on the way (the answer to a blocking send, a command's task) reaches the SDK's handler
 * without going down the path again.
 */
export function compose(interceptors: readonly Interceptor[], terminal: A2ARequestHandler): ComposedPath {
  const entries = new Map<string, A2ARequestHandler>();
  const paths = new Map<Method, string[]>(REQUEST_METHODS.map((method) => [method, []]));
  let below = routed(terminal, () => true);
  for (const { name, around } of [...interceptors].reverse()) {
    if (entries.has(name)) throw new Error(`Two steps of the request path are named ${name}.`);
    const handler = around(below);
    below = routed(handler, (method) => handler.intercepts(method), below);
    entries.set(name, below);
    for (const method of REQUEST_METHODS) if (handler.intercepts(method)) paths.get(method)!.unshift(name);
  }
  return {
    handler: below,
    order: interceptors.map((step) => step.name),
    from: (name) => {
      const entry = entries.get(name);
      if (!entry) throw new Error(`The request path has no step named ${name}.`);
      return entry;
    },
    pathOf: (method) => paths.get(method)!,
  };
}

/** `handler`'s methods where `owns` says so, `below`'s otherwise. */
function routed(handler: A2ARequestHandler, owns: (method: Method) => boolean, below?: A2ARequestHandler) {
  const methods: Partial<Record<Method, unknown>> = {};
  for (const method of REQUEST_METHODS) {
    methods[method] = owns(method) || !below ? (handler[method] as () => unknown).bind(handler) : below[method];
  }
  return methods as A2ARequestHandler;
}
