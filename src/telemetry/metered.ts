/**
 * Metering at the runtime's seams, as wrappers the composition root puts around what it builds:
 * the executor (turns), the model gateway (model requests, tokens, the first token) and the
 * tool box (tool calls). Each wrapper knows the shape it wraps, not the runtime's types, so the
 * runtime need not know about metrics at all; without metrics (`metrics.enabled` off) each
 * returns what it was given.
 */
import { TaskState } from '@a2a-js/sdk';
import { AWAITING_APPROVAL_NOTICE, NOTICE_KEY, stateName } from '../wire.js';
import { secondsSince, type HarnessMetrics, type TurnReason } from './metrics.js';

/** A turn's result as far as metering reads it (`TurnResult`): no final status means the turn was fenced. */
interface TurnResultShape {
  final?: { status?: { state: TaskState; message?: { metadata?: Record<string, unknown> } } };
}

/** The executor: `run` runs one turn; its turn's abort signal says why it was cut short. */
interface TurnRunner<Request, Turn extends { abort: AbortController }, Publisher, Result extends TurnResultShape> {
  run(request: Request, turn: Turn, publisher: Publisher): Promise<Result>;
}

/** The executor, its turns counted while they run and by how they ended. */
export function meteredTurns<R, T extends { abort: AbortController }, P, Result extends TurnResultShape>(
  runner: TurnRunner<R, T, P, Result>,
  metrics: HarnessMetrics | undefined,
): TurnRunner<R, T, P, Result> {
  if (!metrics) return runner;
  return {
    async run(request, turn, publisher) {
      const started = performance.now();
      metrics.turnStarted();
      let result: Result | undefined;
      try {
        result = await runner.run(request, turn, publisher);
        return result;
      } finally {
        const state = result?.final?.status?.state;
        const reason = result ? turnReason(result, turn.abort.signal) : 'error';
        metrics.turnEnded(started, state === undefined ? 'none' : stateName(state).replace(/ /g, '_'), reason);
      }
    },
  };
}

/** The notices a turn's final message carries, as reasons (`runtime/turn/turn-end.ts`). */
const NOTICE_REASONS: Record<string, TurnReason> = {
  canceled: 'canceled',
  interrupted: 'interrupted',
  'model-failure': 'model_failure',
  // A hosted agent's failure (runtime/hosted-agent.ts): the agent stands in the model's place.
  'agent-failure': 'model_failure',
  'store-failure': 'store_failure',
  [AWAITING_APPROVAL_NOTICE]: 'awaiting_approval',
};

/**
 * Why a turn ended, read from its final status: the notice its message carries, or none for the
 * model's reply, which a `/stop` (`TurnStopped`) or a failed write (`TurnUnwritten`, the reply
 * kept) cut short when the turn's abort reason says so.
 */
export function turnReason(result: TurnResultShape, signal: AbortSignal): TurnReason {
  if (!result.final) return 'fenced';
  const notice = result.final.status?.message?.metadata?.[NOTICE_KEY];
  if (typeof notice === 'string') return NOTICE_REASONS[notice] ?? 'replied';
  if (result.final.status?.state === TaskState.TASK_STATE_CANCELED) return 'canceled';
  const reason: unknown = signal.reason;
  if (!(reason instanceof Error)) return 'replied';
  return reason.name === 'TurnStopped' ? 'stopped' : reason.name === 'TurnUnwritten' ? 'store_failure' : 'replied';
}

/** A model request as metering reads it (`ModelRequest`, `ModelResponse`). */
interface ModelRequestShape {
  modelId: string;
  abortSignal: AbortSignal;
  onText: (delta: string) => void;
}
interface ModelResponseShape {
  inputTokens: number;
  outputTokens: number;
}

/**
 * The model gateway, each request timed by model and outcome, its tokens counted (a provider
 * that reports no usage counts none), and the time to its first text observed.
 */
export function meteredGateway<Q extends ModelRequestShape, A extends ModelResponseShape>(
  gateway: { complete(request: Q): Promise<A> },
  metrics: HarnessMetrics | undefined,
): { complete(request: Q): Promise<A> } {
  if (!metrics) return gateway;
  return {
    async complete(request) {
      const meters = metrics.model(request.modelId);
      const started = performance.now();
      let waiting = true;
      const { onText } = request;
      const timedText = (delta: string) => {
        if (waiting && delta.length > 0) {
          waiting = false;
          meters.firstToken.observe(secondsSince(started));
        }
        onText(delta);
      };
      try {
        const response = await gateway.complete({ ...request, onText: timedText });
        meters.duration.ok.observe(secondsSince(started));
        if (response.inputTokens > 0) meters.inputTokens.observe(response.inputTokens);
        if (response.outputTokens > 0) meters.outputTokens.observe(response.outputTokens);
        return response;
      } catch (error) {
        (request.abortSignal.aborted ? meters.duration.aborted : meters.duration.error).observe(secondsSince(started));
        throw error;
      }
    },
  };
}

/** A tool as metering reads it (`ToolEntry`): `call` never throws, its outcome says how it ended. */
interface ToolShape {
  name: string;
  call(input: unknown, signal: AbortSignal): Promise<{ status: string }>;
}

/** The tool box, each call timed and counted by tool and outcome. */
export function meteredTools<T extends ToolShape, L extends { tools: T[] }, Turn>(
  box: { list(signal?: AbortSignal, turn?: Turn): Promise<L> },
  metrics: HarnessMetrics | undefined,
): { list(signal?: AbortSignal, turn?: Turn): Promise<L> } {
  if (!metrics) return box;
  return {
    list: async (signal, turn) => {
      const listed = await box.list(signal, turn);
      return {
        ...listed,
        tools: listed.tools.map((entry) => ({
          ...entry,
          call: async (...args: Parameters<typeof entry.call>) => {
            const started = performance.now();
            let status = 'failed';
            try {
              const outcome = await entry.call(...args);
              status = outcome.status;
              return outcome;
            } finally {
              metrics.toolCallEnded(entry.name, started, status);
            }
          },
        })),
      };
    },
  };
}
