import type { ModelCatalog } from '../models/catalog.js';
import { tracedModel } from '../telemetry/model-spans.js';
import { streamReply, type TextMessage } from '../models/stream.js';
import type { ConversationMessage } from '../conversation/message.js';
import type { ModelGateway, ModelRequest, ModelResponse } from './model-gateway.js';

/** The tool loop's module, once the first turn with tools loaded it. */
let toolLoop: typeof import('../models/tool-loop.js') | undefined;

/** Reaches the catalog's models through the AI SDK, streaming the reply as it arrives. */
export class CatalogGateway implements ModelGateway {
  /**
   * @param timeoutMs bound on one model request
   * @param toolTimeoutMs bound on one tool call: a step of a tool loop may take both
   */
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly timeoutMs: number,
    private readonly toolTimeoutMs = 0,
  ) {}

  async complete(request: ModelRequest): Promise<ModelResponse> {
    // A model of a provider that was down (chosen before a restart, say): its server is asked again first.
    if (!this.catalog.has(request.modelId)) await this.catalog.rediscover();
    const model = tracedModel(this.catalog.resolve(request.modelId), request.modelId, request.conversationId);
    if (request.tools?.length) {
      // Loaded on the first turn with tools (`ai`'s tool loop is a sizeable part of start-up
      // otherwise), then kept: awaiting `import()` again yields ahead of the model request.
      const { runToolLoop } = (toolLoop ??= await import('../models/tool-loop.js'));
      return runToolLoop(model, {
        system: request.system,
        messages: request.messages,
        tools: request.tools,
        maxSteps: request.maxSteps ?? 20,
        abortSignal: request.abortSignal,
        // A tool that bounds its own calls beyond `toolTimeoutMs` (`delegate`) lengthens the step's bound.
        stepTimeoutMs: this.timeoutMs + Math.max(this.toolTimeoutMs, ...request.tools.map((t) => t.timeoutMs ?? 0)),
        modelName: request.modelId,
        onText: request.onText,
        onApprovalRequest: request.onApprovalRequest,
        onRetry: request.onRetry,
      });
    }
    const reply = streamReply(model, {
      system: request.system,
      messages: request.messages.map(asText),
      abortSignal: request.abortSignal,
      timeoutMs: this.timeoutMs,
      modelName: request.modelId,
      onRetry: request.onRetry,
    });
    let text = '';
    for (let step = await reply.next(); ; step = await reply.next()) {
      if (step.done) return { text, inputTokens: step.value.inputTokens, outputTokens: step.value.outputTokens };
      text += step.value;
      request.onText(step.value);
    }
  }
}

/**
 * A turn without tools (none configured, or every server down) still shows the model the
 * calls of earlier turns, as text: a provider refuses tool messages when no tool is declared.
 */
function asText(message: ConversationMessage): TextMessage {
  if (message.role !== 'tool') return message;
  const { tool, input, output, failed } = message.call;
  return {
    role: 'assistant',
    content: `[called ${tool} ${JSON.stringify(input)}: ${failed ? 'failed' : 'result'}]\n${output}`,
  };
}
