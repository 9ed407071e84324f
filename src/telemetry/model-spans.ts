/**
 * Each model request as a `chat <model>` span (GenAI conventions): the model object wrapped so
 * that every `doStream` (one per request: a plain turn's one, each step of a tool loop) runs in
 * a span of its own, which ends with the provider's stream. The request goes out inside the span,
 * so the provider's fetch (`tracingFetch`) carries its `traceparent`. Content (the prompt, the
 * reply's text) only with `--log-content`.
 */
import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import type { LanguageModelV3, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
} from '@opentelemetry/semantic-conventions/incubating';
import { errorType, failSpan, recordsContent, tracer } from './traces.js';

/**
 * `model` with each streamed request in a `chat` span, a child of the span active when it is
 * made (the turn's). Not wrapped when nothing is traced (no recording span is active).
 * @param modelId the catalog id, `provider:model`
 */
export function tracedModel(model: LanguageModelV3, modelId: string, conversationId?: string): LanguageModelV3 {
  if (!trace.getActiveSpan()?.isRecording()) return model;
  const traced: LanguageModelV3 = Object.create(model) as LanguageModelV3;
  traced.doStream = async (options) => {
    const parent = context.active();
    const colon = modelId.indexOf(':');
    const name = colon === -1 ? model.modelId : modelId.slice(colon + 1);
    const span = tracer().startSpan(
      `${GEN_AI_OPERATION_NAME_VALUE_CHAT} ${name}`,
      {
        // The conventions' kind for a request to a model served elsewhere.
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
          [ATTR_GEN_AI_PROVIDER_NAME]: colon === -1 ? model.provider.split('.')[0] : modelId.slice(0, colon),
          [ATTR_GEN_AI_REQUEST_MODEL]: name,
          ...(conversationId ? { [ATTR_GEN_AI_CONVERSATION_ID]: conversationId } : {}),
          ...(recordsContent() ? promptAttributes(options.prompt) : {}),
        },
      },
      parent,
    );
    let result: Awaited<ReturnType<LanguageModelV3['doStream']>>;
    try {
      result = await context.with(trace.setSpan(parent, span), () => model.doStream(options));
    } catch (error) {
      failSpan(span, errorType(error), error instanceof Error ? error.message : undefined);
      span.end();
      throw error;
    }
    return { ...result, stream: observed(result.stream, span) };
  };
  return traced;
}

/** The provider's stream as it was, read through: the span learns usage, finish and failure, and ends with it. */
function observed(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  span: Span,
): ReadableStream<LanguageModelV3StreamPart> {
  const reader = stream.getReader();
  const content = recordsContent();
  let text = '';
  let finishReason: string | undefined;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    if (content)
      span.setAttribute(
        ATTR_GEN_AI_OUTPUT_MESSAGES,
        JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: text }], finish_reason: finishReason ?? '' },
        ]),
      );
    span.end();
  };
  const see = (part: LanguageModelV3StreamPart) => {
    if (part.type === 'text-delta') {
      if (content) text += part.delta;
    } else if (part.type === 'finish') {
      finishReason = part.finishReason.unified;
      span.setAttribute(ATTR_GEN_AI_RESPONSE_FINISH_REASONS, [finishReason]);
      if (part.usage.inputTokens.total !== undefined)
        span.setAttribute(ATTR_GEN_AI_USAGE_INPUT_TOKENS, part.usage.inputTokens.total);
      if (part.usage.outputTokens.total !== undefined)
        span.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, part.usage.outputTokens.total);
    } else if (part.type === 'response-metadata') {
      if (part.id) span.setAttribute(ATTR_GEN_AI_RESPONSE_ID, part.id);
      if (part.modelId) span.setAttribute(ATTR_GEN_AI_RESPONSE_MODEL, part.modelId);
    } else if (part.type === 'error') {
      failSpan(span, errorType(part.error));
    }
  };
  return new ReadableStream<LanguageModelV3StreamPart>({
    async pull(controller) {
      try {
        const read = await reader.read();
        if (read.done) {
          end();
          controller.close();
          return;
        }
        see(read.value);
        controller.enqueue(read.value);
      } catch (error) {
        failSpan(span, errorType(error), error instanceof Error ? error.message : undefined);
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      // The reader left before the end: the caller aborted, or stopped reading after a failure.
      end();
      return reader.cancel(reason);
    },
  });
}

/** The prompt as the conventions' `gen_ai.system_instructions` and `gen_ai.input.messages` (JSON). */
function promptAttributes(prompt: LanguageModelV3Prompt): Record<string, string> {
  const system: { type: 'text'; content: string }[] = [];
  const messages: unknown[] = [];
  for (const message of prompt) {
    if (message.role === 'system') {
      system.push({ type: 'text', content: message.content });
      continue;
    }
    const parts = message.content.map((part) => {
      if (part.type === 'text') return { type: 'text', content: part.text };
      if (part.type === 'tool-call')
        return { type: 'tool_call', id: part.toolCallId, name: part.toolName, arguments: part.input };
      if (part.type === 'tool-result')
        return { type: 'tool_call_response', id: part.toolCallId, response: part.output };
      return { type: part.type };
    });
    messages.push({ role: message.role, parts });
  }
  return {
    ...(system.length > 0 ? { [ATTR_GEN_AI_SYSTEM_INSTRUCTIONS]: JSON.stringify(system) } : {}),
    [ATTR_GEN_AI_INPUT_MESSAGES]: JSON.stringify(messages),
  };
}
