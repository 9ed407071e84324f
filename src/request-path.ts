import type { AgentCard } from '@a2a-js/sdk';
import { commandsStep, withCommandsExtension, type CommandRegistry } from './commands/index.js';
import {
  compose,
  handlerTerminal,
  type CallMethod,
  type ComposedSteps,
  type MessageClaims,
  type Step,
} from './a2a/index.js';
import { describeError, type Logger } from './log.js';
import type { TaskEngine } from './runtime/engine.js';
import { DEFAULT_LONG_POLL_MS } from './config/schema.js';
import { generationsStep } from './runtime/generations-step.js';
import { idempotencyStep } from './runtime/message-idempotency.js';
import { ElicitationAnswers } from './runtime/elicitation-answers.js';
import { HarnessRequestHandler } from './runtime/request-handler.js';
import type { TaskView } from './runtime/subtask-metadata.js';
import type { PushConfigs } from './runtime/push-configs.js';
import type { TurnQueue } from './runtime/turn/turn-queue.js';
import { errorMappingStep } from './server/a2a-errors.js';
import { cardSignaturesStep, type CardSigner } from './server/card-signing.js';
import { spansStep } from './telemetry/a2a-spans.js';
import { traceCommand } from './telemetry/traces.js';
import type { HarnessMetrics } from './telemetry/metrics.js';
import { metricsStep } from './telemetry/request-metrics.js';
import type { LogSubscription } from './ports.js';

export interface RequestPathOptions {
  engine: TaskEngine;
  /** Tasks as clients see them (sub-task links shown). */
  view: TaskView;
  /** The readers of task logs here (`Store.feeds`). */
  feeds: { follow(taskId: string): Promise<LogSubscription> };
  /** The record of handled message ids, for commands and turns alike (CMD-34); none: every message is new. */
  claims?: MessageClaims;
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
  /** The longest an A2A 1.1 `GetTask` with `currentGeneration` waits (`longPollMs`); default `DEFAULT_LONG_POLL_MS`. */
  longPollMs?: number;
  /** Signs the extended card (`card.signing`); without it, cards leave unsigned. */
  signer?: CardSigner;
}

/**
 * The request path, outermost first, in the order a call goes through it:
 * - `spans`: a server span for the call, continuing the caller's trace (`telemetry/a2a-spans.ts`);
 * - `metrics`: every call counted by method and outcome, and timed (`telemetry/request-metrics.ts`);
 * - `errorMapping`: whatever fails below leaves as an A2A error, an internal one logged;
 * - `cardSignatures`: the extended card leaves signed, with what the steps below added (issue 38);
 * - `commands`: a command message is answered by the commands extension and goes no further;
 * - `idempotency`: a message id is handled once per user (CMD-34);
 * - `generations`: A2A 1.1's rules on a task's generation, for a call that asks for 1.1: `GetTask`
 *   waits past `currentGeneration`, a send's `ifGenerationMatch` goes down to the engine
 *   (`runtime/generations-step.ts`); a 1.0 call passes through with neither;
 * then the harness's request handler, whose every method is a call of the engine. A call
 * passes only the steps that take its method (`compose`, `a2a/steps.ts`).
 *
 * Spans and metrics come first so that they time and see everything below, failures as the
 * client gets them. Commands come before idempotency: a command is made
 * idempotent by the extension itself with the same claims (CMD-13), and a turn's message by the
 * step just above the engine, which would refuse a resend as busy. Generations come last: a
 * resend is answered by idempotency as the first send went, however the task moved on since.
 */
export function requestPathSteps(options: RequestPathOptions): {
  steps: Step[];
  handler: HarnessRequestHandler;
} {
  const { engine, view, feeds, claims, registry, log, metrics } = options;
  const warn = (what: string) => (error: unknown) => log.warn(what, { error: describeError(error) });
  const tasks = {
    read: view.read.bind(view),
    readLog: view.readLog.bind(view),
    feeds,
    isBusy: (id: string) => engine.isBusy(id),
  };
  const handler = new HarnessRequestHandler(
    engine,
    view,
    feeds,
    () => withCommandsExtension(options.card(), registry),
    options.push,
    options.queue,
    new ElicitationAnswers({ engine, tasks: view, feeds }),
  );
  const steps: Step[] = [
    spansStep(),
    ...(metrics ? [metricsStep(metrics)] : []),
    errorMappingStep(
      (error, method) => log.error('request failed', { rpc: method, error: describeError(error) }),
      (reason, method) => {
        metrics?.refused(reason);
        log.debug('call refused, retryably', { rpc: method, reason });
      },
    ),
    cardSignaturesStep(options.signer),
    commandsStep({
      registry,
      port: engine,
      claims,
      getTask: (id, context) => handler.getTask({ tenant: context.tenant ?? '', id }, context),
      onHandlerError: (error, command) => log.error('command handler failed', { command, error: describeError(error) }),
      aroundHandler: traceCommand,
      onStreamError: warn('a turn stream failed after its client went away'),
      pushConfig: options.push && ((config, context, existing) => options.push!.forTurn(config, context, existing)),
    }),
    ...(claims
      ? [
          idempotencyStep({
            claims,
            tasks,
            queued: options.queue && ((id, messageId, context) => options.queue!.followQueued(id, messageId, context)),
            onClaimError: (error, task) =>
              log.warn('a message id could not be recorded as handled', { task, error: describeError(error) }),
          }),
        ]
      : []),
    generationsStep({ read: tasks.read, feeds, maxWaitMs: options.longPollMs ?? DEFAULT_LONG_POLL_MS }),
  ];
  return { steps, handler };
}

export interface RequestPath {
  /** What each binding runs a call through (`server/jsonrpc-binding.ts`, `server/rest-binding.ts`, `server/grpc-binding.ts`). */
  path: Pick<ComposedSteps, 'run'>;
  /** The steps' names, outermost first. */
  order: readonly string[];
  /** The steps a call of `method` passes, outermost first. */
  pathOf(method: CallMethod): readonly string[];
  /** The card as its route serves it: built on every call (CMD-16). */
  card: () => Promise<AgentCard>;
}

/** The request path the harness serves. */
export function buildRequestPath(options: RequestPathOptions): RequestPath {
  const { steps, handler } = requestPathSteps(options);
  const path = compose(steps, handlerTerminal(handler));
  const card = () => handler.getAgentCard();
  return { path, order: path.order, pathOf: path.pathOf, card };
}
