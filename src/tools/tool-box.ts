import type { ServerCallContext } from '@a2a-js/sdk/server';

/** What a turn may call, as the runtime sees it: tools by name, with a JSON Schema for their input. */
export interface ToolBox {
  /**
   * The tools offered now, named per the rule in `names.ts`, and the servers left out. Called at
   * the start of each turn: a server that died since its last use is connected again here (or
   * left out, logged); one still on its first attempt to connect is waited for, up to
   * `mcpConnectWaitMs` or until `signal` aborts, then left out. `turn`: the turn the list is
   * for, which a tool bound to its task needs (`delegate`); without it, such tools are left out.
   */
  list(signal?: AbortSignal, turn?: ToolTurn): Promise<ToolList>;
  /** Ends every connection and child process; called once, at shutdown. */
  close(): Promise<void>;
}

/** The turn a list of tools is for. */
export interface ToolTurn {
  taskId: string;
  contextId: string;
  /** The task's metadata as stored before the turn; none for a new task. */
  metadata: Record<string, unknown> | undefined;
  /** The call that started the turn: its user's scope (a tool bound to the task needs it). */
  callContext: ServerCallContext | undefined;
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
  /**
   * Whether a person must approve each call first (the server's `approve` policy, CMD-33), or
   * which calls must, by their input (the built-in `shell`: a command no rule grants).
   */
  needsApproval: boolean | ((input: unknown) => boolean);
  /**
   * How long one call may take, when it is longer than `toolTimeoutMs` and the call bounds
   * itself (the `delegate` tool: `agents.timeoutMs`): a step that offers it is bounded by it.
   */
  timeoutMs?: number;
  /**
   * Runs the call; never throws: every way it ends is an outcome. `ask`: how the call puts its
   * server's questions to the user (MCP elicitation); without it, every question is declined.
   */
  call(input: unknown, signal: AbortSignal, ask?: AskUser): Promise<ToolOutcome>;
}

/** A server's question to the user during a call (MCP `elicitation/create`). */
export type UserQuestion =
  | { mode: 'form'; message: string; schema: Record<string, unknown> }
  /** A sign-in or other step out of band; `completed` resolves when the server says the user is done. */
  | { mode: 'url'; message: string; url: string; completed: Promise<void> };

/** The user's answer, as MCP's `ElicitResult` carries it. */
export interface UserAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/** Puts a question to the user and resolves with the answer (declined when nobody answers in time). */
export type AskUser = (question: UserQuestion) => Promise<UserAnswer>;

/** How a call ended, and the text the model and the task are given. */
export interface ToolOutcome {
  status: 'succeeded' | 'failed' | 'canceled';
  /** Within `toolOutputChars`, with a note when cut. */
  output: string;
  /** The whole output when `output` was cut (within its own ceiling): the task keeps it as an artifact. */
  full?: string;
}

/** The tools a turn may call, and the configured servers whose tools it lacks. */
export interface ToolList {
  tools: ToolEntry[];
  /** In config order; empty when every server is connected. */
  missing: MissingServer[];
}

/** A configured server whose tools a turn goes without, and why. */
export type MissingServer =
  /** Its first attempt to connect had not answered when the turn's wait (`waitedMs`) ended. */
  | { server: string; why: 'connecting'; waitedMs: number }
  /** Its last attempt to connect failed: `failure` says why (no path, no secret). */
  | { server: string; why: 'unreachable'; failure?: string };

/** What the user is told when a turn runs without some servers' tools: one sentence per server. */
export function missingToolsText(missing: readonly MissingServer[]): string {
  return missing
    .map((entry) =>
      entry.why === 'connecting'
        ? `The MCP server "${entry.server}" has not answered yet (waited ${entry.waitedMs} ms): this turn runs without its tools, which later turns get once it answers.`
        : `The MCP server "${entry.server}" cannot be reached now${entry.failure ? ` (${entry.failure})` : ''}: this turn runs without its tools; it is tried again at the next turn.`,
    )
    .join(' ');
}
