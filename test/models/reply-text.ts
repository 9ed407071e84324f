import type { LanguageModelV3 } from '@ai-sdk/provider';
import { streamReply, type ReplyOutcome, type StreamReplyOptions } from '../../src/models/stream.js';

/** A model's whole reply as one string: the tests read replies whole, the harness streams them. */
export async function replyText(
  model: LanguageModelV3,
  options: StreamReplyOptions,
): Promise<ReplyOutcome & { text: string }> {
  const reply = streamReply(model, options);
  let text = '';
  for (let step = await reply.next(); ; step = await reply.next()) {
    if (step.done) return { ...step.value, text };
    text += step.value;
  }
}
