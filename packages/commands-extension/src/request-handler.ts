import type {
  AgentCard,
  GetExtendedAgentCardRequest,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
} from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { CommandCalls, type CommandCallsOptions } from './command-calls.js';
import { DelegatingRequestHandler } from './delegating-handler.js';

export { DEFAULT_ANSWER_HISTORY } from './command-calls.js';

/** What `CommandsRequestHandler` needs besides the handler it wraps: the commands, the port, and optional hooks. */
export interface CommandsRequestHandlerOptions extends Omit<CommandCallsOptions, 'getTask'> {
  /** The card to serve, before the extension entry is added; default: the inner handler's. */
  baseCard?: () => Promise<AgentCard> | AgentCard;
}

/**
 * The Commands extension as a request handler wrapped around any other (usually the SDK's
 * `DefaultRequestHandler`). A command message never reaches the inner handler: sending it
 * there would run a second execution on a busy task's bus, which closes the running turn's
 * streams and loses its events (see the SDK notes). Tasks are read through the inner handler
 * and replies posted through the port (`port.ts`); that is all the extension needs of the
 * server it is mounted on. Everything else passes through untouched, except that the card
 * gains the extension entry and the extension is echoed in the `A2A-Extensions` response
 * header when the client asked for it (CMD-17). What it does to each call is `CommandCalls`'s.
 */
export class CommandsRequestHandler extends DelegatingRequestHandler {
  private readonly calls: CommandCalls;

  constructor(
    inner: A2ARequestHandler,
    private readonly options: CommandsRequestHandlerOptions,
  ) {
    super(inner);
    this.calls = new CommandCalls({
      ...options,
      getTask: (id, context) => this.inner.getTask({ tenant: context.tenant ?? '', id }, context),
    });
  }

  protected override onCall(context: ServerCallContext): void {
    this.calls.activate(context);
  }

  override async getAgentCard(): Promise<AgentCard> {
    return this.calls.card(this.options.baseCard ? await this.options.baseCard() : await this.inner.getAgentCard());
  }

  override async getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    this.onCall(context);
    return this.calls.card(await this.inner.getAuthenticatedExtendedAgentCard(params, context), 'authenticated');
  }

  override sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    this.onCall(context);
    return this.calls.sendMessage(params, context, () => this.inner.sendMessage(params, context));
  }

  /** Not `async *`: the extension must be activated before the transport writes headers (CMD-17). */
  override sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    this.onCall(context);
    return this.calls.sendMessageStream(params, context, () => this.inner.sendMessageStream(params, context));
  }
}
