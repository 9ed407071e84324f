/**
 * The tool calls of one turn, as the task shows and keeps them (TOOL-1): each change of a
 * call's status is a WORKING status update whose agent message holds the call as a data part
 * (`ToolCallData`, marked with `TOOL_CALL_KEY`), so that streams see it as it happens and the
 * history keeps it for `GetTask`, the next turn and a restart. When the turn ends, every call
 * still open is closed as canceled (TOOL-4): nothing is left showing as running.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { ToolEntry } from '../tools/index.js';
import { dataPart, isFinalToolStatus, textPart, TOOL_CALL_KEY, toolCallsOf, type ToolCallData } from '../wire.js';
import type { ModelTool } from './model-gateway.js';
import { statusUpdate } from './events.js';

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

export class TurnToolCalls {
  private readonly open = new Map<string, ToolCallData>();
  private closed = false;

  constructor(
    private readonly taskId: string,
    private readonly contextId: string,
    private readonly publish: (update: TaskStatusUpdateEvent) => void,
  ) {}

  /**
   * The entries as the model's tools, each call reported as it goes. `beforeCall` runs first:
   * the turn sends the text the model wrote before the call, so that the stream keeps the order.
   */
  wrap(entries: readonly ToolEntry[], beforeCall: () => void = () => {}): ModelTool[] {
    return entries.map((entry) => ({
      name: entry.name,
      description: entry.description,
      inputSchema: entry.inputSchema,
      execute: (input, signal) => {
        beforeCall();
        return this.run(entry, input, signal);
      },
    }));
  }

  /** Ends the turn's reporting: each call still open is reported canceled, and later news of it is dropped. */
  close(): void {
    this.closed = true;
    for (const call of this.open.values()) this.report({ ...call, status: 'canceled', output: CALL_LEFT_TEXT });
    this.open.clear();
  }

  private async run(entry: ToolEntry, input: unknown, signal: AbortSignal): Promise<string> {
    if (this.closed) throw new Error(CALL_LEFT_TEXT);
    const call: ToolCallData = { id: randomUUID(), tool: entry.name, server: entry.server, input: input ?? {}, status: 'running' };
    this.open.set(call.id, call);
    this.report(call);
    const outcome = await entry.call(input, signal);
    if (!this.open.delete(call.id)) throw new Error(CALL_LEFT_TEXT);
    this.report({ ...call, status: outcome.status, output: outcome.output });
    if (outcome.status !== 'succeeded') throw new Error(outcome.output);
    return outcome.output;
  }

  private report(call: ToolCallData): void {
    this.publish(statusUpdate(this.taskId, this.contextId, TaskState.TASK_STATE_WORKING, toolCallMessage(this.taskId, this.contextId, call)));
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
