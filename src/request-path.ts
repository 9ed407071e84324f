import type { AgentCard } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { CommandsRequestHandler, withCommandsExtension, type CommandRegistry } from './commands/index.js';
import type { DelegatingRequestHandler, MessageClaims } from './a2a/index.js';
import { describeError, type Logger } from './log.js';
import type { TaskEngine } from './runtime/engine.js';
import { MessageIdempotency } from './runtime/message-idempotency.js';
import { HarnessRequestHandler } from './runtime/request-handler.js';
import type { TaskView } from './runtime/subtask-metadata.js';
import type { PushConfigs } from './runtime/push-configs.js';
import type { TurnQueue } from './runtime/turn-queue.js';
import type { LogSubscription } from './store/index.js';
import { A2AErrorMapping } from './server/a2a-errors.js';
import { SseEventIds } from './server/sse-event-ids.js';
import { TransportCardCache } from './server/transport-card.js';
import { A2ASpans } from './telemetry/a2a-spans.js';
import { traceCommand } from './telemetry/traces.js';
import type { HarnessMetrics } from './telemetry/metrics.js';
import { RequestMetrics } from './telemetry/request-metrics.js';

/** One step of the request path: a handler built around the path below it, and its name in the printed order. */
export interface Interceptor {
  name: string;
  around(below: A2ARequestHandler): DelegatingRequestHandler;
}

export interface RequestPathOptions {
  engine: TaskEngine;
  /** Tasks as clients see them (sub-task links shown). */
  view: TaskView;
  /** The readers of task logs here (`Store.feeds`). */
  feeds: { follow(taskId: string): Promise<LogSubscription> };
  /** The record of handled message ids, for commands and turns alike (CMD-34). */
  claims: MessageClaims;
  registry: CommandRegistry;
  /** The card as it stands now, before the commands extension's entry is added. */
  card: () => AgentCard;
  log: Logger;
  /** Push notifications' configs; without them their operations are refused. */
  push?: PushConfigs;
  /** The tasks' queues of messages sent while a turn runs; without them such a message is refused. */
  queue?: TurnQueue;
  /** Where every call is counted; without it, no `metrics` step. */
  metrics?: HarnessMetrics;
}

/** Where the card's route reads the card: below the transports' cache, so that it is built per request (CMD-16). */
export const CARD_ROUTE_ENTRY = 'commands';

/**
 * The request path, outermost first, in the order a request goes through it:
 * - `spans`: a server span for the call, continuing the caller's trace (`telemetry/a2a-spans.ts`);
 * - `metrics`: every call counted by method and outcome, and timed (`telemetry/request-metrics.ts`);
 * - `sseIds`: each streamed event's generation noted for its SSE id (`server/sse-event-ids.ts`);
 * - `errorMapping`: whatever fails below leaves as an A2A error, an internal one logged;
 * - `transportCard`: the transports' per-call card checks get the first card built;
 * - `commands`: a command message is answered by the commands extension and goes no further;
 * - `idempotency`: a message id is handled once per user (CMD-34);
 * then the harness's request handler, whose every method is a call of the engine. A call
 * passes only the steps that do something for its method (`compose`).
 */
export function requestPathSteps(options: RequestPathOptions): {
  interceptors: Interceptor[];
  handler: A2ARequestHandler;
} {
  const { engine, view, feeds, claims, registry, log } = options;
  const warn = (what: string) => (error: unknown) => log.warn(what, { error: describeError(error) });
  const tasks = {
    read: view.read.bind(view),
    readLog: view.readLog.bind(view),
    feeds,
    isBusy: (id: string) => engine.isBusy(id),
  };
  const { metrics } = options;
  const interceptors: Interceptor[] = [
    { name: 'spans', around: (below) => new A2ASpans(below) },
    ...(metrics ? [{ name: 'metrics', around: (below: A2ARequestHandler) => new RequestMetrics(below, metrics) }] : []),
    { name: 'sseIds', around: (below) => new SseEventIds(below) },
    {
      name: 'errorMapping',
      around: (below) =>
        new A2AErrorMapping(
          below,
          (error, method) => log.error('request failed', { rpc: method, error: describeError(error) }),
          (reason, method) => {
            metrics?.refused(reason);
            log.debug('call refused, retryably', { rpc: method, reason });
          },
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
          aroundHandler: traceCommand,
          onStreamError: warn('a turn stream failed after its client went away'),
          pushConfig: options.push && ((config, context, existing) => options.push!.forTurn(config, context, existing)),
        }),
    },
    {
      name: 'idempotency',
      around: (below) =>
        new MessageIdempotency(below, {
          claims,
          tasks,
          queued: options.queue && ((id, messageId, context) => options.queue!.followQueued(id, messageId, context)),
          onClaimError: (error, task) =>
            log.warn('a message id could not be recorded as handled', { task, error: describeError(error) }),
        }),
    },
  ];
  const handler = new HarnessRequestHandler(
    engine,
    view,
    feeds,
    () => withCommandsExtension(options.card(), registry),
    options.push,
    options.queue,
  );
  return { interceptors, handler };
}

export interface RequestPath extends ComposedPath {
  /** The card as its route serves it: built on every call (CMD-16). */
  card: () => Promise<AgentCard>;
}

/** The request path the harness serves; the transports are given `handler`. */
export function buildRequestPath(options: RequestPathOptions): RequestPath {
  const { interceptors, handler } = requestPathSteps(options);
  const path = compose(interceptors, handler);
  return { ...path, card: path.from(CARD_ROUTE_ENTRY).getAgentCard };
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
 * on the way (the answer to a blocking send, a command's task) reaches the handler without
 * going down the path again.
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
