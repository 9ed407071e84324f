/**
 * The tool calls of one turn, as the task shows and keeps them (TOOL-1): each change of a
 * call's status is a WORKING status update whose agent message holds the call as a data part
 * (`ToolCallData`, marked with `TOOL_CALL_KEY`), so that streams see it as it happens and the
 * history keeps it for `GetTask`, the next turn and a restart. When the turn ends, every call
 * still open is closed as canceled (TOOL-4): nothing is left showing as running.
 */
import { randomUUID } from 'node:crypto';
import {
  Role,
  TaskState,
  type Message,
  type Part,
  type TaskArtifactUpdateEvent,
  type TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import type { ToolEntry } from '../tools/index.js';
import {
  dataPart,
  isFinalToolStatus,
  textPart,
  TOOL_CALL_KEY,
  TOOL_OUTPUT_ARTIFACT_NAME,
  toolCallsOf,
  type ToolCallData,
} from '../wire.js';
import type { ModelTool, RequestedToolCall } from './model-gateway.js';
import { statusUpdate } from './events.js';
import { traceToolCall } from '../telemetry/traces.js';
import type { TurnQuestions } from './elicitation-waits.js';

/** Said of a call its turn left behind (canceled, interrupted, or ended by the step limit). */
export const CALL_LEFT_TEXT = 'The turn ended before the call did.';

/** The agent message reporting one call's status: a line of text for any client, the call as data. */
export function toolCallMessage(taskId: string, contextId: string, call: ToolCallData): Message {
  const line = `[tool] ${call.tool}: ${call.status}`;
  return {
    messageId: randomUUID(),
    taskId,
    contextId,
    role: Role.ROLE_AGENT,
    parts: [textPart(line), dataPart({ ...call })],
    metadata: { [TOOL_CALL_KEY]: call.id },
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Said to the model of a call a person denied, before their reason if they gave one. */
export const DENIED_TEXT = 'The user denied this call.';

/** A person's answer to a call that waited for approval (CMD-33). */
export interface ApprovalDecision {
  approved: boolean;
  reason?: string;
}

/** The artifact holding a call's whole output when its report carries only the head of it. */
export function toolOutputArtifact(
  taskId: string,
  contextId: string,
  artifactId: string,
  tool: string,
  text: string,
): TaskArtifactUpdateEvent {
  return {
    taskId,
    contextId,
    artifact: {
      artifactId,
      name: TOOL_OUTPUT_ARTIFACT_NAME,
      description: `The whole output of ${tool}`,
      parts: [textPart(text)],
      metadata: {},
      extensions: [],
    },
    append: false,
    lastChunk: true,
    metadata: {},
  };
}

export class TurnToolCalls {
  private readonly open = new Map<string, ToolCallData>();
  /** The entries offered this turn, by the name the model calls. */
  private readonly entries = new Map<string, ToolEntry>();
  /** Calls the model asked for that wait for a person's approval; they outlive the turn. */
  private readonly waitingCalls: ToolCallData[] = [];
  private closed = false;

  constructor(
    private readonly taskId: string,
    private readonly contextId: string,
    private readonly publish: (update: TaskStatusUpdateEvent) => void,
    private readonly publishArtifact: (update: TaskArtifactUpdateEvent) => void = () => {},
    /** How the calls put their servers' questions to the user (issue 39); none: declined. */
    private readonly questions?: Pick<TurnQuestions, 'askerFor'>,
  ) {}

  /**
   * The entries as the model's tools, each call reported as it goes. `beforeCall` runs first:
   * the turn sends the text the model wrote before the call, so that the stream keeps the order.
   */
  wrap(entries: readonly ToolEntry[], beforeCall: () => void = () => {}): ModelTool[] {
    for (const entry of entries) this.entries.set(entry.name, entry);
    return entries.map((entry) => ({
      name: entry.name,
      description: entry.description,
      inputSchema: entry.inputSchema,
      needsApproval: entry.needsApproval,
      timeoutMs: entry.timeoutMs,
      execute: async (input, signal) => {
        beforeCall();
        const ended = await this.run(entry, this.newCall(entry, input), signal);
        if (ended.status !== 'succeeded') throw new Error(ended.output);
        return ended.output ?? '';
      },
    }));
  }

  /** A call the model asked for that needs approval: shown as `awaiting-approval`, not run. */
  awaitApproval(requested: RequestedToolCall): void {
    const server = this.entries.get(requested.tool)?.server ?? '';
    const call: ToolCallData = {
      id: randomUUID(),
      tool: requested.tool,
      server,
      input: requested.input ?? {},
      status: 'awaiting-approval',
    };
    this.waitingCalls.push(call);
    this.report(call);
  }

  /** The calls of this turn waiting for approval, in the order the model asked for them. */
  waiting(): readonly ToolCallData[] {
    return this.waitingCalls;
  }

  /**
   * Carries out a person's answer to a call that waited (CMD-33): an approved call runs now, as
   * the model asked for it; a denied one ends canceled, saying so (and why, when a reason was
   * given). Resolves with the call's final report, which the model is shown.
   */
  async answer(call: ToolCallData, decision: ApprovalDecision, signal: AbortSignal): Promise<ToolCallData> {
    if (!decision.approved) {
      const output = decision.reason ? `${DENIED_TEXT} Reason: ${decision.reason}` : DENIED_TEXT;
      return this.report({ ...call, status: 'canceled', output });
    }
    const entry = this.entries.get(call.tool);
    if (!entry)
      return this.report({
        ...call,
        status: 'failed',
        output: `The tool ${call.tool} is no longer offered; the call was not made.`,
      });
    return this.run(entry, call, signal);
  }

  /**
   * Ends the turn's reporting: each call still open is reported canceled, and later news of it
   * is dropped. Calls waiting for approval are closed too, unless the turn ends waiting for them.
   */
  close({ keepWaiting = false }: { keepWaiting?: boolean } = {}): void {
    this.closed = true;
    for (const call of this.open.values()) this.report({ ...call, status: 'canceled', output: CALL_LEFT_TEXT });
    this.open.clear();
    if (!keepWaiting)
      for (const call of this.waitingCalls.splice(0))
        this.report({ ...call, status: 'canceled', output: CALL_LEFT_TEXT });
  }

  private newCall(entry: ToolEntry, input: unknown): ToolCallData {
    return { id: randomUUID(), tool: entry.name, server: entry.server, input: input ?? {}, status: 'running' };
  }

  /** Runs a call, reporting it as it goes; resolves with its final report (canceled when the turn ended first). */
  private async run(entry: ToolEntry, asked: ToolCallData, signal: AbortSignal): Promise<ToolCallData> {
    const left: ToolCallData = { ...asked, status: 'canceled', output: CALL_LEFT_TEXT };
    if (this.closed) return left;
    const call: ToolCallData = { ...asked, status: 'running' };
    this.open.set(call.id, call);
    this.report(call);
    const outcome = await traceToolCall(call, () => entry.call(call.input, signal, this.questions?.askerFor(call)));
    if (!this.open.delete(call.id)) return left;
    if (outcome.full === undefined) return this.report({ ...call, status: outcome.status, output: outcome.output });
    const artifactId = `tool-output-${call.id}`;
    this.publishArtifact(toolOutputArtifact(this.taskId, this.contextId, artifactId, call.tool, outcome.full));
    return this.report({ ...call, status: outcome.status, output: outcome.output, outputArtifactId: artifactId });
  }

  private report(call: ToolCallData): ToolCallData {
    this.publish(
      statusUpdate(
        this.taskId,
        this.contextId,
        TaskState.TASK_STATE_WORKING,
        toolCallMessage(this.taskId, this.contextId, call),
      ),
    );
    return call;
  }
}
/** The calls of a history whose newest report is not final: left open by a turn that was cut short. */
export function openToolCalls(history: readonly Message[]): ToolCallData[] {
  const newest = new Map<string, ToolCallData>();
  for (const message of history) for (const call of toolCallsOf(message.parts)) newest.set(call.id, call);
  return [...newest.values()].filter((call) => !isFinalToolStatus(call.status));
}

/** The closing reports of those calls, as data parts to add to the message that ends the turn (TOOL-4). */
export function closingParts(open: readonly ToolCallData[]): Part[] {
  return open.map((call) => dataPart({ ...call, status: 'canceled', output: CALL_LEFT_TEXT }));
}
