import type { ConversationMessage } from '../conversation/message.js';

/** A tool the model may call in this turn. */
export interface ModelTool {
  name: string;
  description: string;
  /** The input as a JSON Schema object. */
  inputSchema: Record<string, unknown>;
  /** When true the call is not run: the model's request for it is told to `onApprovalRequest` (CMD-33). */
  needsApproval?: boolean | ((input: unknown) => boolean);
  /** A bound on one call longer than `toolTimeoutMs` (`ToolEntry.timeoutMs`): the step that makes it may take that long. */
  timeoutMs?: number;
  /** Resolves with the result text; rejects with an error whose message the model reads as the error result. */
  execute(input: unknown, signal: AbortSignal): Promise<string>;
}

/** One model request of a turn. */
export interface ModelRequest {
  /** `provider:model`, as offered by the catalog. */
  modelId: string;
  system?: string;
  messages: ConversationMessage[];
  /** The A2A context id the request is made for: its spans' `gen_ai.conversation.id`. */
  conversationId?: string;
  /** Aborts the provider request itself (CancelTask, shutdown), and the tool call running. */
  abortSignal: AbortSignal;
  /** Called with each piece of text as it arrives, in order. */
  onText: (delta: string) => void;
  /** The tools the model may call; with none, the request is one plain reply. */
  tools?: ModelTool[];
  /** The most model-and-tool steps when there are tools. */
  maxSteps?: number;
  /**
   * Told of each call the model asked for to a tool that needs approval, in stream order. The
   * loop then stops after the step: the turn waits for a person's answer.
   */
  onApprovalRequest?: (call: RequestedToolCall) => void;
  /**
   * Told at once each time the model request failed and is tried again (a rate limit, a server
   * error), with why, in words fit to show the user; the request goes on.
   */
  onRetry?: (notice: string) => void;
}

/** A call the model asked for, not run. */
export interface RequestedToolCall {
  /** The model's id for the call. */
  id: string;
  /** The name the model called. */
  tool: string;
  input: unknown;
}

export interface ModelResponse {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * How a turn reaches a model. Failures are thrown as `HarnessError` (`model_unknown`,
 * `provider_failed`) with a message fit to show the user; an abort is thrown as the signal's
 * reason, so the turn can tell a cancel from a failure.
 */
export interface ModelGateway {
  complete(request: ModelRequest): Promise<ModelResponse>;
}
