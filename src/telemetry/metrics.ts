/**
 * The harness's Prometheus metrics (docs/operations.md, "Metrics"): one registry per harness,
 * so that several harnesses in one process (the tests) count apart, and the recording calls
 * the rest of the code makes. Recording is a counter increment or a histogram observation on a
 * child bound once per label set: no label object is built per event. No label ever holds a
 * task, context or user id; models and tools are labels, their sets bounded by the config.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { A2AError } from '@a2a-js/sdk/errors';

export const METRIC_PREFIX = 'tiny_harness_';

/** The A2A 1.0 name of each method of the SDK's request handler that is an A2A call. */
export const A2A_METHODS = {
  sendMessage: 'SendMessage',
  sendMessageStream: 'SendStreamingMessage',
  getTask: 'GetTask',
  listTasks: 'ListTasks',
  cancelTask: 'CancelTask',
  resubscribe: 'SubscribeToTask',
  createTaskPushNotificationConfig: 'CreateTaskPushNotificationConfig',
  getTaskPushNotificationConfig: 'GetTaskPushNotificationConfig',
  listTaskPushNotificationConfigs: 'ListTaskPushNotificationConfigs',
  deleteTaskPushNotificationConfig: 'DeleteTaskPushNotificationConfig',
  getAuthenticatedExtendedAgentCard: 'GetExtendedAgentCard',
} as const;

export type A2AMethodName = (typeof A2A_METHODS)[keyof typeof A2A_METHODS];

/** How a turn ended, as `tiny_harness_turns_total` labels it (`reason`). */
export type TurnReason =
  | 'replied'
  | 'stopped'
  | 'canceled'
  | 'interrupted'
  | 'awaiting_approval'
  | 'model_failure'
  | 'store_failure'
  | 'fenced'
  /** The executor failed (a bug): the engine logs it. */
  | 'error';

/**
 * Why a call was refused retryably, as `tiny_harness_a2a_refusals_total` labels it: the error
 * code it was refused with (admission's, before the call was read; the turn bound's; a drain's).
 */
export type RefusalReason = 'requests_at_limit' | 'event_loop_lagging' | 'turns_at_limit' | 'instance_draining';

const REFUSAL_REASONS: readonly RefusalReason[] = [
  'requests_at_limit',
  'event_loop_lagging',
  'turns_at_limit',
  'instance_draining',
];

/** How one attempt at a push delivery ended. */
export type PushOutcome = 'delivered' | 'failed' | 'gave_up' | 'interrupted';

/** From a few milliseconds (a task read) to minutes (a streamed turn, a subscription). */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** The GenAI semantic conventions' advice for `gen_ai.client.operation.duration`. */
const OPERATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** The GenAI semantic conventions' advice for `gen_ai.client.token.usage`. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** The GenAI conventions' advice for a time to first token (`gen_ai.server.time_to_first_token`). */
const FIRST_TOKEN_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** Store transactions: under a millisecond on SQLite, a few on PostgreSQL, more under lock contention. */
const TRANSACTION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The metrics of one model, bound once: a model request records through these. */
export interface ModelMeters {
  firstToken: Histogram.Internal<string>;
  inputTokens: Histogram.Internal<string>;
  outputTokens: Histogram.Internal<string>;
  duration: Record<'ok' | 'error' | 'aborted', Histogram.Internal<string>>;
}

/** A tool's metrics, bound once. */
interface ToolMeters {
  calls: Record<string, Counter.Internal>;
  duration: Histogram.Internal<string>;
}

/**
 * Node's process metrics (CPU, memory, event-loop lag, GC, handles), prefixed, on a registry
 * of their own made once per process: they describe the process, whichever harness serves
 * them, and prom-client's collectors start observers (event-loop delay, GC) that are never
 * stopped, so one set per harness would leak one set per harness started.
 */
let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: METRIC_PREFIX });
  }
  return processRegistry;
}

export class HarnessMetrics {
  /** What a scrape reads: the harness's own metrics and the process's. */
  readonly registry: Registry;
  private readonly own = new Registry();
  private readonly requestMeters = new Map<string, { ok: Counter.Internal; duration: Histogram.Internal<string> }>();
  private readonly requests = this.counter(
    'a2a_requests_total',
    'A2A calls answered, by method and outcome (`ok` or the A2A error).',
    ['method', 'outcome'],
  );
  private readonly requestDuration = this.histogram(
    'a2a_request_duration_seconds',
    'How long A2A calls took, to the end of the stream for a streaming one.',
    ['method'],
    REQUEST_BUCKETS,
  );
  private readonly refusals = this.counter(
    'a2a_refusals_total',
    'A2A calls refused retryably (503, UNAVAILABLE), by reason; admission refuses before the call is read.',
    ['reason'],
  );
  private readonly refusalMeters = new Map<RefusalReason, Counter.Internal>();
  private readonly openStreams = this.gauge('open_streams', 'Streams open now (SSE and gRPC), by method.', ['method']);
  private readonly turns = this.counter(
    'turns_total',
    'Turns ended here, by the state they left the task in and why.',
    ['state', 'reason'],
  );
  private readonly turnDuration = this.histogram(
    'turn_duration_seconds',
    'How long turns ran, from their start to their final status.',
    ['reason'],
    REQUEST_BUCKETS,
  );
  private readonly runningTurns = this.gauge('running_turns', 'Turns running here now.', []);
  private readonly firstToken = this.histogram(
    'turn_time_to_first_token_seconds',
    "From a turn's model request to the first text of its reply.",
    ['gen_ai_provider_name', 'gen_ai_request_model'],
    FIRST_TOKEN_BUCKETS,
  );
  private readonly tokens = this.histogram(
    'gen_ai_client_token_usage',
    'Tokens used per model request (gen_ai.client.token.usage).',
    ['gen_ai_token_type', 'gen_ai_provider_name', 'gen_ai_request_model'],
    TOKEN_BUCKETS,
  );
  private readonly modelDuration = this.histogram(
    'gen_ai_client_operation_duration_seconds',
    "Model requests' duration, tool steps included (gen_ai.client.operation.duration), by outcome.",
    ['gen_ai_provider_name', 'gen_ai_request_model', 'outcome'],
    OPERATION_BUCKETS,
  );
  private readonly modelMeters = new Map<string, ModelMeters>();
  private readonly toolCalls = this.counter('tool_calls_total', 'Tool calls, by tool and outcome.', [
    'tool',
    'outcome',
  ]);
  private readonly toolDuration = this.histogram(
    'tool_call_duration_seconds',
    'How long tool calls took, by tool.',
    ['tool'],
    REQUEST_BUCKETS,
  );
  private readonly toolMeters = new Map<string, ToolMeters>();
  private readonly transactions = this.histogram(
    'store_transaction_duration_seconds',
    "The store's transactions, from BEGIN to COMMIT or ROLLBACK.",
    ['outcome'],
    TRANSACTION_BUCKETS,
  );
  private readonly committed = this.transactions.labels('commit');
  private readonly rolledBack = this.transactions.labels('rollback');
  private readonly takenOver = this.counter(
    'turn_leases_taken_over_total',
    'Turn leases of an instance found dead, taken over here and their turns ended.',
    [],
  );
  private readonly pushDeliveries = this.counter(
    'push_deliveries_total',
    'Attempts at push-notification deliveries, by outcome.',
    ['outcome'],
  );
  private readonly scheduleRuns = this.counter(
    'schedule_runs_total',
    'Due runs of schedules (issue 39), by outcome: how the run task ended, or skipped (missed beyond the catch-up time), or not_started.',
    ['outcome'],
  );
  private readonly pushPruned = this.counter(
    'push_deliveries_pruned_total',
    'Push-notification deliveries kept as failed, pruned `push.keepFailedForMs` after their last attempt.',
    [],
  );

  constructor() {
    for (const method of Object.values(A2A_METHODS)) {
      this.requestMeters.set(method, {
        ok: this.requests.labels(method, 'ok'),
        duration: this.requestDuration.labels(method),
      });
    }
    for (const method of [A2A_METHODS.sendMessageStream, A2A_METHODS.resubscribe])
      this.openStreams.labels(method).set(0);
    for (const reason of REFUSAL_REASONS) this.refusalMeters.set(reason, this.refusals.labels(reason));
    this.runningTurns.set(0);
    this.takenOver.inc(0);
    this.pushPruned.inc(0);
    this.registry = Registry.merge([this.own, processMetrics()]);
  }

  /** The Prometheus text of every metric, and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  /** An A2A call ended: `error` is what it failed with (an A2A error, once mapped), none when it succeeded. */
  requestEnded(method: A2AMethodName, startedMs: number, error?: unknown): void {
    const meters = this.requestMeters.get(method)!;
    meters.duration.observe(secondsSince(startedMs));
    if (error === undefined) meters.ok.inc();
    else this.requests.labels(method, outcomeOf(error)).inc();
  }

  /** A call was refused retryably (counted whatever its transport, whether or not it was read). */
  refused(reason: RefusalReason): void {
    this.refusalMeters.get(reason)!.inc();
  }

  streamOpened(method: A2AMethodName): void {
    this.openStreams.labels(method).inc();
  }

  streamClosed(method: A2AMethodName): void {
    this.openStreams.labels(method).dec();
  }

  turnStarted(): void {
    this.runningTurns.inc();
  }

  /** A turn ended, leaving its task in `state` (`input_required`, `completed`, …; `none` when fenced). */
  turnEnded(startedMs: number, state: string, reason: TurnReason): void {
    this.runningTurns.dec();
    this.turns.labels(state, reason).inc();
    this.turnDuration.labels(reason).observe(secondsSince(startedMs));
  }

  /** The meters of a model (`provider:model`), bound on its first request. */
  model(modelId: string): ModelMeters {
    let meters = this.modelMeters.get(modelId);
    if (!meters) {
      const colon = modelId.indexOf(':');
      const provider = colon < 0 ? '' : modelId.slice(0, colon);
      const model = modelId.slice(colon + 1);
      meters = {
        firstToken: this.firstToken.labels(provider, model),
        inputTokens: this.tokens.labels('input', provider, model),
        outputTokens: this.tokens.labels('output', provider, model),
        duration: {
          ok: this.modelDuration.labels(provider, model, 'ok'),
          error: this.modelDuration.labels(provider, model, 'error'),
          aborted: this.modelDuration.labels(provider, model, 'aborted'),
        },
      };
      this.modelMeters.set(modelId, meters);
    }
    return meters;
  }

  /** A tool call ended: `outcome` is `succeeded`, `failed` or `canceled`. */
  toolCallEnded(tool: string, startedMs: number, outcome: string): void {
    let meters = this.toolMeters.get(tool);
    if (!meters) this.toolMeters.set(tool, (meters = { calls: {}, duration: this.toolDuration.labels(tool) }));
    meters.duration.observe(secondsSince(startedMs));
    (meters.calls[outcome] ??= this.toolCalls.labels(tool, outcome)).inc();
  }

  storeTransaction(seconds: number, committed: boolean): void {
    (committed ? this.committed : this.rolledBack).observe(seconds);
  }

  leasesTakenOver(count: number): void {
    this.takenOver.inc(count);
  }

  pushDelivery(outcome: PushOutcome): void {
    this.pushDeliveries.labels(outcome).inc();
  }

  /** `outcome`: how a scheduled run's task ended, `skipped` or `not_started` (`runtime/schedules/scheduler.ts`). */
  scheduleRun(outcome: string, count: number): void {
    this.scheduleRuns.labels(outcome).inc(count);
  }

  pushDeliveriesPruned(count: number): void {
    this.pushPruned.inc(count);
  }

  private counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
    return new Counter({ name: METRIC_PREFIX + name, help, labelNames, registers: [this.own] });
  }

  private gauge<L extends string>(name: string, help: string, labelNames: L[]): Gauge<L> {
    return new Gauge({ name: METRIC_PREFIX + name, help, labelNames, registers: [this.own] });
  }

  private histogram<L extends string>(name: string, help: string, labelNames: L[], buckets: number[]): Histogram<L> {
    return new Histogram({ name: METRIC_PREFIX + name, help, labelNames, buckets, registers: [this.own] });
  }
}

/** Seconds since `startedMs` (a `performance.now()` reading). */
export function secondsSince(startedMs: number): number {
  return (performance.now() - startedMs) / 1000;
}

/**
 * The A2A error's name a failed call is counted under: its class's (`TaskNotFoundError`), or
 * `InternalError` for a failure of the server's own (the client is told no more either).
 */
function outcomeOf(error: unknown): string {
  if (!(error instanceof A2AError) || error.name === 'InternalFailure' || error.name === 'A2AError')
    return 'InternalError';
  return error.name;
}
