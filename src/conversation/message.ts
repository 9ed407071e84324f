/** A finished tool call of an earlier step or turn, as the model is shown it again. */
export interface PastToolCall {
  id: string;
  /** The name the model called. */
  tool: string;
  input: unknown;
  output: string;
  failed: boolean;
}

/** One message of the conversation a turn sends: text, or a tool call and its result. */
export type ConversationMessage =
  { role: 'user' | 'assistant'; content: string } | { role: 'tool'; call: PastToolCall };
