import type { ModelCatalog } from '../models/catalog.js';
import { streamReply } from '../models/stream.js';
import type { ModelGateway, ModelRequest, ModelResponse } from './model-gateway.js';

/** Reaches the catalog's models through the AI SDK, streaming the reply as it arrives. */
export class CatalogGateway implements ModelGateway {
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly timeoutMs: number,
  ) {}

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const model = this.catalog.resolve(request.modelId);
    const reply = streamReply(model, {
      system: request.system,
      messages: request.messages,
      abortSignal: request.abortSignal,
      timeoutMs: this.timeoutMs,
      modelName: request.modelId,
    });
    let text = '';
    for (let step = await reply.next(); ; step = await reply.next()) {
      if (step.done) return { text, inputTokens: step.value.inputTokens, outputTokens: step.value.outputTokens };
      text += step.value;
      request.onText(step.value);
    }
  }
}
