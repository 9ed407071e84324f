import { Role, type Message, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { DelegatingRequestHandler } from '../commands/index.js';

/**
 * Refuses messages the SDK's decoder lets through in a form nothing can use: its `fromJSON`
 * turns `parts: "hello"` into no parts, a part without content into an empty part, and
 * `role: 99` into UNRECOGNIZED, rather than rejecting them. Such a message would be stored and
 * sent to the model; it is refused here, first, with the protocol's malformed-request error.
 */
export class RequestValidation extends DelegatingRequestHandler {
  override sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    validate(params);
    return this.inner.sendMessage(params, context);
  }

  override sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    validate(params);
    return this.inner.sendMessageStream(params, context);
  }
}

function validate(params: SendMessageRequest): void {
  const message = params.message;
  if (!message) throw new RequestMalformedError('params.message is required.');
  if (!message.messageId) throw new RequestMalformedError('message.messageId is required.');
  if (message.role !== Role.ROLE_USER) throw new RequestMalformedError('message.role must be ROLE_USER.');
  if (!message.parts?.length || message.parts.some((part) => !part.content)) {
    throw new RequestMalformedError('message.parts must hold at least one part with content (text, data, url or raw).');
  }
}
