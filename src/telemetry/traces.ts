/**
 * The harness's spans, after the OpenTelemetry GenAI semantic conventions (docs/operations.md,
 * "Traces"): `invoke_agent` for a turn, `execute_tool` for a tool call, `execute_command` for a
 * command of the Commands extension; the model requests' `chat` spans are in `model-spans.ts`,
 * the A2A calls' server spans in `a2a-spans.ts`. Only `@opentelemetry/api` is loaded here: with
 * no SDK started (`tracing-sdk.ts`), every span is the API's no-op one and costs next to nothing.
 * Message and tool content goes into a span only when the harness logs content (`--log-content`).
 */
import {
  context,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { TaskState } from '@a2a-js/sdk';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from '@opentelemetry/semantic-conventions/incubating';
import { isHarnessError } from '../errors.js';
import { redactSecrets } from '../log.js';
import { NOTICE_KEY, REPLY_ERROR_KEY } from '../wire.js';

/** The instrumentation scope of every span the harness makes. */
export const TRACER_NAME = 'tiny-harness';

/** A2A task id on spans, named as a2a-java's OpenTelemetry module names it (never on a metric). */
export const ATTR_A2A_TASK_ID = 'gen_ai.agent.a2a.task_id';

/** The command a span runs, without its slash. */
export const ATTR_COMMAND_NAME = 'tiny-harness.command.name';

/** Task metadata key of the trace context a sub-task was started in (a W3C `traceparent`). */
export const TRACE_PARENT_KEY = 'tiny-harness/traceparent';

/** What every span of this process may need to know; set once at start-up (`configureTraces`). */
interface TraceSettings {
  /** The agent's name, as its card gives it: `invoke_agent <name>`. */
  agentName: string;
  /** Message and tool content in spans (`--log-content`); never otherwise. */
  logContent: boolean;
}

const settings: TraceSettings = { agentName: 'tiny-harness', logContent: false };

/** Sets what the spans of this process say: the agent's name, and whether content is recorded. */
export function configureTraces(given: Partial<TraceSettings>): void {
  Object.assign(settings, given);
}

/** Whether content may go into spans (`--log-content`). */
export function recordsContent(): boolean {
  return settings.logContent;
}

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Whether spans go anywhere: a tracer provider is registered (`tracing-sdk.ts` starts one).
 * Without one every span is the API's no-op one, so the steps on every request (the A2A call's
 * span, a command's) skip making it and its attributes: the same outcome, for less CPU.
 */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(TRACER_NAME) !== undefined;
}

/**
 * A low-cardinality name for what failed, for `error.type`: a harness error's code, an abort,
 * or the error's class name.
 */
export function errorType(error: unknown): string {
  if (isHarnessError(error)) return error.code;
  if (error instanceof Error || error instanceof DOMException)
    return error.name === 'AbortError' ? 'aborted' : error.name || 'Error';
  return '_OTHER';
}

/**
 * Marks a span failed: status ERROR and `error.type`; the message only (no stack, no content),
 * secrets removed (a provider's 401 text may quote the key).
 */
export function failSpan(span: Span, type: string, message?: string): void {
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message === undefined ? undefined : redactSecrets(message) });
}

/** Runs `work` inside `span` (its child spans and outgoing requests see it), ending the span after. */
export async function inSpan<T>(
  span: Span,
  parent: Context,
  work: () => Promise<T>,
  onResult?: (result: T) => void,
): Promise<T> {
  try {
    const result = await context.with(trace.setSpan(parent, span), work);
    onResult?.(result);
    return result;
  } catch (error) {
    failSpan(span, errorType(error), error instanceof Error ? error.message : undefined);
    throw error;
  } finally {
    span.end();
  }
}

/** The sub-task's metadata entry holding the trace context it was started in: none when nothing is traced. */
export function traceParentEntry(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? { [TRACE_PARENT_KEY]: carrier.traceparent } : {};
}

/** What a turn's span is told of the turn. */
export interface TracedTurn {
  taskId: string;
  contextId: string;
  /** The task as stored before the turn (none for a new task). */
  task?: { metadata?: Record<string, unknown>; history?: readonly unknown[] };
}

/** What a turn returns, as far as its span reads it: the final status. */
interface TurnEndFacts {
  final?: { status?: { state?: number; message?: { metadata?: Record<string, unknown> } } };
}

/**
 * A turn as an `invoke_agent <agent>` span. A sub-task's first turn is a child of the span that
 * started the sub-task (its stored `traceparent`), on whichever instance runs it; any other turn
 * is a child of the span active where it starts (the A2A call, or the command that resumed it).
 */
export function traceTurn<T extends TurnEndFacts>(turn: TracedTurn, run: () => Promise<T>): Promise<T> {
  const stored = turn.task?.metadata?.[TRACE_PARENT_KEY];
  const parent =
    typeof stored === 'string' && (turn.task?.history?.length ?? 0) === 0
      ? propagation.extract(ROOT_CONTEXT, { traceparent: stored })
      : context.active();
  const span = tracer().startSpan(
    `${GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT} ${settings.agentName}`,
    {
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
        [ATTR_GEN_AI_AGENT_NAME]: settings.agentName,
        [ATTR_GEN_AI_CONVERSATION_ID]: turn.contextId,
        [ATTR_A2A_TASK_ID]: turn.taskId,
      },
    },
    parent,
  );
  return inSpan(span, parent, run, ({ final }) => {
    if (final?.status?.state !== TaskState.TASK_STATE_FAILED) return;
    const notice = final.status.message?.metadata?.[NOTICE_KEY];
    failSpan(span, typeof notice === 'string' ? notice : 'turn_failed');
  });
}

/** A tool call as the task reports it, as far as its span reads it. */
interface ToolCallFacts {
  id: string;
  tool: string;
  input: unknown;
}

/** A tool call as an `execute_tool <tool>` span; a call that did not succeed is an error. */
export function traceToolCall<T extends { status: string; output?: string }>(
  call: ToolCallFacts,
  run: () => Promise<T>,
): Promise<T> {
  const parent = context.active();
  const span = tracer().startSpan(
    `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${call.tool}`,
    {
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
        [ATTR_GEN_AI_TOOL_NAME]: call.tool,
        [ATTR_GEN_AI_TOOL_CALL_ID]: call.id,
        [ATTR_GEN_AI_TOOL_TYPE]: 'extension',
        ...(settings.logContent ? { [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: JSON.stringify(call.input ?? {}) } : {}),
      },
    },
    parent,
  );
  return inSpan(span, parent, run, (ended) => {
    if (settings.logContent && ended.output !== undefined)
      span.setAttribute(ATTR_GEN_AI_TOOL_CALL_RESULT, ended.output);
    if (ended.status !== 'succeeded') failSpan(span, `tool_${ended.status}`);
  });
}

/**
 * A command of the Commands extension as an `execute_command /<name>` span. Not a GenAI
 * operation (no model is asked), so it carries no `gen_ai.operation.name`; what it starts (a
 * sub-task's turn) is its child. A handler that failed is an error; a user's mistake is not.
 */
export function traceCommand<T extends { data?: Record<string, unknown> }>(
  command: string,
  task: { id: string; contextId: string },
  run: () => Promise<T>,
): Promise<T> {
  if (!tracing()) return run();
  const parent = context.active();
  const span = tracer().startSpan(
    `execute_command /${command}`,
    {
      attributes: {
        [ATTR_COMMAND_NAME]: command,
        [ATTR_GEN_AI_CONVERSATION_ID]: task.contextId,
        [ATTR_A2A_TASK_ID]: task.id,
      },
    },
    parent,
  );
  return inSpan(span, parent, run, (result) => {
    if (result.data?.[REPLY_ERROR_KEY] === 'command_failed') failSpan(span, 'command_failed');
  });
}

/**
 * A scheduled run (issue 39) as a trace of its own: a root span, whatever was active when the
 * tick ran, with the run's turn as its child.
 */
export function traceScheduledRun<T>(scheduleId: string, dueMs: number, run: () => Promise<T>): Promise<T> {
  const span = tracer().startSpan(
    'schedule run',
    {
      root: true,
      attributes: {
        'tiny_harness.schedule.id': scheduleId,
        'tiny_harness.schedule.due_at': new Date(dueMs).toISOString(),
      },
    },
    ROOT_CONTEXT,
  );
  return inSpan(span, ROOT_CONTEXT, run);
}
