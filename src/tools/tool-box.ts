/** What a turn may call, as the runtime sees it: tools by name, with a JSON Schema for their input. */
export interface ToolBox {
  /**
   * The tools offered now, named per the rule in `names.ts`. Called at the start of each turn:
   * a server that died since its last use is connected again here (or left out, logged); one
   * still on its first attempt to connect is left out, not waited for.
   */
  list(): Promise<ToolEntry[]>;
  /** Ends every connection and child process; called once, at shutdown. */
  close(): Promise<void>;
}

export interface ToolEntry {
  /** The name the model calls, `<server>_<tool>`, unique among the entries of one list. */
  name: string;
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  description: string;
  /** The tool's input as a JSON Schema object. */
  inputSchema: Record<string, unknown>;
  /** Whether a person must approve each call first (the server's `approve` policy, CMD-33). */
  needsApproval: boolean;
  /** Runs the call; never throws: every way it ends is an outcome. */
  call(input: unknown, signal: AbortSignal): Promise<ToolOutcome>;
}

/** How a call ended, and the text the model and the task are given. */
export interface ToolOutcome {
  status: 'succeeded' | 'failed' | 'canceled';
  /** Within `toolOutputChars`, with a note when cut. */
  output: string;
  /** The whole output when `output` was cut (within its own ceiling): the task keeps it as an artifact. */
  full?: string;
}
