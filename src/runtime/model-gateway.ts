/** One message of the conversation a turn sends: models are spoken to in text. */
export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** One model request of a turn. */
export interface ModelRequest {
  /** `provider:model`, as offered by the catalog. */
  modelId: string;
  system?: string;
  messages: ConversationMessage[];
  /** Aborts the provider request itself (CancelTask, shutdown). */
  abortSignal: AbortSignal;
  /** Called with each piece of text as it arrives, in order. */
  onText: (delta: string) => void;
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
