/**
 * A turn with tools: the AI SDK's `streamText` runs the loop (model, tool calls, their results
 * back to the model, ...) until the model answers without calling a tool or `maxSteps` steps
 * were made (`stopWhen: stepCountIs(maxSteps)`). The plain `streamReply` stays the path of a
 * turn without tools, where the loop's pipeline would only cost time (see `stream.ts`).
 *
 * A tool that needs approval is not run: the AI SDK reports the model's call to it as a
 * `tool-approval-request`, and, a call of the step being left without a result, ends the loop
 * after that step (the turn then waits for a person's answer, CMD-33).
 *
 * A tool whose `execute` throws gives the model an error result (`tool-error`), and the loop
 * goes on; only the model's own failures end the turn, as `provider_failed`, and the caller's
 * abort as an `AbortError`, as in `streamReply`.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { jsonSchema, stepCountIs, streamText, tool, type ModelMessage, type ToolSet } from 'ai';
import { isHarnessError } from '../errors.js';
import { providerFailure, providerTimeout } from './failure.js';
import { announcingRetries, retriesWithin, type RetryListener } from './retries.js';
import type { ReplyUsage } from './stream.js';

/** A tool the model may call. `execute` resolves with the result text, or throws with the error text the model reads. */
export interface LoopTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** A call to it is not run but reported to `onApprovalRequest`: the loop stops after that step. */
  needsApproval?: boolean | ((input: unknown) => boolean);
  execute(input: unknown, signal: AbortSignal): Promise<string>;
}

/** A message of the conversation: text, or a finished tool call of an earlier turn. */
export type LoopMessage =
  | { role: 'user' | 'assistant'; content: string }
  | { role: 'tool'; call: { id: string; tool: string; input: unknown; output: string; failed: boolean } };

export interface ToolLoopOptions {
  system?: string;
  messages: LoopMessage[];
  tools: LoopTool[];
  maxSteps: number;
  abortSignal: AbortSignal;
  /** Bound on each step: one model request and the tool calls it asks for. */
  stepTimeoutMs: number;
  modelName: string;
  onText: (delta: string) => void;
  /** Told of each call to a tool that needs approval, in stream order, instead of running it. */
  onApprovalRequest?: (call: { id: string; tool: string; input: unknown }) => void;
  /** Told at once each time a step's model request failed and is tried again (`retries.ts`). */
  onRetry?: RetryListener;
}

export interface ToolLoopOutcome extends ReplyUsage {
  /** Every step's text, in order: what the reply artifact holds. */
  text: string;
}

export async function runToolLoop(model: LanguageModelV3, options: ToolLoopOptions): Promise<ToolLoopOutcome> {
  const tools: ToolSet = {};
  for (const entry of options.tools) {
    tools[entry.name] = tool({
      description: entry.description,
      inputSchema: jsonSchema(entry.inputSchema as Parameters<typeof jsonSchema>[0]),
      needsApproval: entry.needsApproval ?? false,
      execute: (input: unknown, { abortSignal }) => entry.execute(input, abortSignal ?? options.abortSignal),
    });
  }
  let failure: unknown;
  const maxRetries = retriesWithin(options.stepTimeoutMs);
  const result = streamText({
    model: announcingRetries(model, { maxRetries, modelName: options.modelName, onRetry: options.onRetry }),
    system: options.system,
    messages: modelMessages(options.messages),
    tools,
    stopWhen: stepCountIs(options.maxSteps),
    abortSignal: options.abortSignal,
    timeout: { stepMs: options.stepTimeoutMs },
    maxRetries,
    onError: ({ error }) => {
      failure ??= error;
    },
  });
  let text = '';
  let usage: ReplyUsage = { inputTokens: 0, outputTokens: 0 };
  try {
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta' && part.text) {
        text += part.text;
        options.onText(part.text);
      } else if (part.type === 'tool-approval-request') {
        options.onApprovalRequest?.({
          id: part.toolCall.toolCallId,
          tool: part.toolCall.toolName,
          input: part.toolCall.input,
        });
      } else if (part.type === 'error') {
        failure ??= part.error;
        break;
      } else if (part.type === 'finish') {
        usage = { inputTokens: part.totalUsage.inputTokens ?? 0, outputTokens: part.totalUsage.outputTokens ?? 0 };
      }
    }
  } catch (error) {
    failure ??= error;
  }
  if (options.abortSignal.aborted) throw new DOMException('The model request was aborted.', 'AbortError');
  if (failure !== undefined) {
    if (isHarnessError(failure)) throw failure;
    if (failure instanceof Error && failure.name === 'TimeoutError')
      throw providerTimeout(options.modelName, options.stepTimeoutMs);
    throw providerFailure(options.modelName, failure);
  }
  return { text, ...usage };
}

/** Earlier turns as the AI SDK's messages: each finished call as the model's call and its result. */
function modelMessages(messages: readonly LoopMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role !== 'tool') {
      out.push({ role: message.role, content: message.content });
      continue;
    }
    const { id, tool: toolName, input, output, failed } = message.call;
    out.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName, input: input ?? {} }] });
    out.push({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: id,
          toolName,
          output: failed ? { type: 'error-text', value: output } : { type: 'text', value: output },
        },
      ],
    });
  }
  return out;
}
