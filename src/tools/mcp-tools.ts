/**
 * The MCP servers of the config file as one {@link ToolBox}: every connected server's tools,
 * named `<server>_<tool>`; each call bounded by `toolTimeoutMs` and cancellable, its output
 * cut to `toolOutputChars`. A call that fails in any way (the tool says so, it times out, its
 * server crashed or cannot be reached) is an outcome with a text the model can read, so that
 * the turn goes on (TOOL-2); a dead server is connected again on its next use.
 */
import type { McpServerConfig } from '../config/mcp-servers.js';
import type { Logger } from '../log.js';
import { ToolNamer } from './names.js';
import { boundOutput, resultText, splitOutput } from './output.js';
import { mcpClientSdk, type McpClientSdk } from './mcp-sdk.js';
import { MessageTooLarge, ServerConnection, serverTarget, STDIO_MESSAGE_LIMIT } from './server-connection.js';
import type { AskUser, MissingServer, ToolBox, ToolEntry, ToolList, ToolOutcome } from './tool-box.js';
import { WORKSPACE_SERVER, type BuiltinTool } from './workspace-tools.js';

export interface McpToolsOptions {
  servers: Readonly<Record<string, McpServerConfig>>;
  /** Where `${VAR}` values come from. */
  env: Readonly<Record<string, string | undefined>>;
  toolTimeoutMs: number;
  /**
   * How long a server's question to the user may wait for an answer (`elicitationTimeoutMs`):
   * a call's step may take that much longer than `toolTimeoutMs`. None: calls get no more time.
   */
  elicitationTimeoutMs?: number;
  /** How long a turn waits for servers still on their first attempt to connect (`mcpConnectWaitMs`); default 0. */
  connectWaitMs?: number;
  toolOutputChars: number;
  log: Logger;
  /** Log each call's input and (the head of its) output too: content, off by default (`--log-content`). */
  logContent?: boolean;
  /** The built-in workspace tools (config `workspace`), offered first, as the server `workspace`. */
  builtin?: readonly BuiltinTool[];
}

/** A prompt of a connected server, as prompt commands are made from it. */
export interface PromptEntry {
  server: string;
  /** Its own name on the server. */
  name: string;
  description: string;
  /** Its arguments in the server's order. */
  arguments: Array<{ name: string; description?: string; required: boolean }>;
}

/** A server as `/tools` shows it. */
export interface ServerReport {
  name: string;
  /** Its first attempt to connect is under way: it has not answered yet. */
  connecting: boolean;
  connected: boolean;
  /** Why the last attempt failed, while it is not connected. */
  failure?: string;
  /** `asks`: its calls wait for a person's approval (CMD-33). */
  tools: { name: string; description: string; asks: boolean }[];
}

/** Why a prompt could not be read, in words fit to show the user (no path, no secret). */
export class PromptUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PromptUnavailable';
  }
}

/** How much of an input or output a content log line holds. */
const LOGGED_CONTENT_CHARS = 2000;

/** Whether a server's `approve` policy asks for a person's approval of calls to `tool` (its own name on the server). */
export function needsApproval(policy: McpServerConfig['approve'] | undefined, tool: string): boolean {
  if (policy === undefined || policy === 'never') return false;
  return policy === 'always' || policy.includes(tool);
}

export class McpTools implements ToolBox {
  private readonly connections: ServerConnection[];
  private started: Promise<void> | undefined;

  /** Throws `config_invalid` when a server names an unset environment variable. */
  constructor(private readonly options: McpToolsOptions) {
    this.connections = Object.entries(options.servers).map(
      ([name, server]) =>
        new ServerConnection(name, serverTarget(name, server, options.env), {
          log: options.log,
          connectTimeoutMs: options.toolTimeoutMs,
        }),
    );
  }

  /**
   * Starts connecting every server at once, in the background: each one's tools join the box
   * when it answers, and one that fails is logged and tried again on next use. Resolves (never
   * rejects) once every server has answered its first attempt; serving need not wait for it.
   */
  start(): Promise<void> {
    this.started ??= Promise.all(this.connections.map((c) => c.ensure().catch(() => undefined))).then(() => undefined);
    return this.started;
  }

  /** True when the config names any server or built-in tool. */
  get configured(): boolean {
    return this.connections.length > 0 || (this.options.builtin?.length ?? 0) > 0;
  }

  /** The servers in config order: still connecting, connected or not (and why not), with their tools as the model sees them (`/tools`). */
  servers(): ServerReport[] {
    const entries = this.entries();
    const toolsOf = (server: string) =>
      entries
        .filter((e) => e.server === server)
        // A rule of its input (the workspace's shell) may ask: shown as asking.
        .map((e) => ({ name: e.name, description: e.description, asks: Boolean(e.needsApproval) }));
    const builtin: ServerReport[] = this.options.builtin?.length
      ? [{ name: WORKSPACE_SERVER, connecting: false, connected: true, tools: toolsOf(WORKSPACE_SERVER) }]
      : [];
    return [
      ...builtin,
      ...this.connections.map((c) => ({
        name: c.name,
        connecting: c.connecting,
        connected: c.connected,
        failure: c.connected ? undefined : c.lastFailure,
        tools: toolsOf(c.name),
      })),
    ];
  }

  /**
   * The tools of the servers connected now, and the servers left out. A server lost or failed
   * since is connected again first; one still on its first attempt is waited for, up to
   * `connectWaitMs` or until `signal` aborts: then its tools are offered from the turn after it
   * answers.
   */
  async list(signal?: AbortSignal): Promise<ToolList> {
    const waitedMs = this.options.connectWaitMs ?? 0;
    const connecting = this.connections.filter((connection) => connection.connecting);
    const settled = this.connections.filter((connection) => !connection.connecting);
    await Promise.all([
      ...settled.map((connection) => connection.ensure().catch(() => undefined)),
      firstAnswers(connecting, waitedMs, signal),
    ]);
    const missing = this.connections
      .filter((connection) => !connection.connected)
      .map((connection): MissingServer =>
        connection.connecting
          ? { server: connection.name, why: 'connecting', waitedMs }
          : {
              server: connection.name,
              why: 'unreachable',
              ...(connection.lastFailure === undefined ? {} : { failure: connection.lastFailure }),
            },
      );
    return { tools: this.entries(), missing };
  }

  /** The tools of the servers connected now, named by the rule of `names.ts`. */
  private entries(): ToolEntry[] {
    const namer = new ToolNamer();
    const entries: ToolEntry[] = (this.options.builtin ?? []).map((tool) => ({
      ...tool,
      name: namer.name(tool.server, tool.tool),
    }));
    for (const connection of this.connections) {
      for (const tool of connection.listedTools()) {
        entries.push({
          name: namer.name(connection.name, tool.name),
          server: connection.name,
          tool: tool.name,
          description: tool.description ?? tool.title ?? '',
          inputSchema: tool.inputSchema as Record<string, unknown>,
          needsApproval: needsApproval(this.options.servers[connection.name]?.approve, tool.name),
          ...(this.options.elicitationTimeoutMs && {
            timeoutMs: this.options.toolTimeoutMs + this.options.elicitationTimeoutMs,
          }),
          call: (input, signal, ask) => this.call(connection, tool.name, input, signal, ask),
        });
      }
    }
    return entries;
  }

  /** The prompts of every server, in config order then the server's (a server away keeps its last list). */
  prompts(): PromptEntry[] {
    return this.connections.flatMap((connection) =>
      connection.listedPrompts().map((prompt) => ({
        server: connection.name,
        name: prompt.name,
        description: prompt.description ?? prompt.title ?? '',
        arguments: (prompt.arguments ?? []).map((arg) => ({
          name: arg.name,
          description: arg.description,
          required: arg.required === true,
        })),
      })),
    );
  }

  /** Tells `listener` whenever a server's prompt list is read anew. */
  onPromptsChanged(listener: () => void): void {
    for (const connection of this.connections) connection.onPromptsChanged(listener);
  }

  /**
   * The text of a server's prompt with these arguments: its messages' text, in order. Throws
   * `PromptUnavailable` when the server cannot be reached or refuses.
   */
  async getPrompt(server: string, name: string, args: Record<string, string>): Promise<string> {
    const connection = this.connections.find((c) => c.name === server);
    if (!connection) throw new PromptUnavailable(`No MCP server is called "${server}".`);
    try {
      const result = await connection.getPrompt(name, args, this.options.toolTimeoutMs);
      return result.messages
        .map((message) =>
          message.content.type === 'text'
            ? message.content.text
            : message.content.type === 'resource' && 'text' in message.content.resource
              ? message.content.resource.text
              : '',
        )
        .filter((text) => text !== '')
        .join('\n\n');
    } catch (error) {
      const why =
        !connection.connected && connection.lastFailure !== undefined
          ? `cannot be reached now (${connection.lastFailure})`
          : `refused the prompt: ${error instanceof Error ? error.message.slice(0, 300) : 'unknown error'}`;
      throw new PromptUnavailable(`The MCP server "${server}" ${why}.`);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.close()));
  }

  private async call(
    connection: ServerConnection,
    tool: string,
    input: unknown,
    signal: AbortSignal,
    ask: AskUser | undefined,
  ): Promise<ToolOutcome> {
    // A signal of the call's own, tied to the turn's: the MCP client leaves its abort listener
    // on the signal it is given, and a turn's signal outlives many calls.
    const own = new AbortController();
    const onAbort = () => own.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const started = performance.now();
    const outcome = await this.callOnce(connection, tool, input, signal, own.signal, ask).finally(() =>
      signal.removeEventListener('abort', onAbort),
    );
    // Content (input, output) only when asked for: a tool's data may be anyone's.
    const content = this.options.logContent
      ? {
          input: JSON.stringify(input ?? {}).slice(0, LOGGED_CONTENT_CHARS),
          output: outcome.output.slice(0, LOGGED_CONTENT_CHARS),
        }
      : {};
    this.options.log.info('tool call', {
      server: connection.name,
      tool,
      status: outcome.status,
      ms: Math.round(performance.now() - started),
      ...content,
    });
    return outcome;
  }

  private async callOnce(
    connection: ServerConnection,
    tool: string,
    input: unknown,
    turnSignal: AbortSignal,
    signal: AbortSignal,
    ask: AskUser | undefined,
  ): Promise<ToolOutcome> {
    const bound = (text: string) => boundOutput(text, this.options.toolOutputChars);
    try {
      const args =
        input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
      const result = await connection.call(tool, args, { signal, timeoutMs: this.options.toolTimeoutMs, ask });
      const text = resultText(result);
      return result.isError
        ? { status: 'failed', ...splitOutput(text || 'The tool reported an error.', this.options.toolOutputChars) }
        : { status: 'succeeded', ...splitOutput(text, this.options.toolOutputChars) };
    } catch (error) {
      if (turnSignal.aborted) return { status: 'canceled', output: 'The call was canceled.' };
      return { status: 'failed', output: bound(this.failureText(await mcpClientSdk(), connection, error)) };
    }
  }

  /** What the model is told when a call failed outside the tool. */
  private failureText({ McpError, ErrorCode }: McpClientSdk, connection: ServerConnection, error: unknown): string {
    const server = connection.name;
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return `The tool did not answer within ${this.options.toolTimeoutMs} ms; the call was canceled.`;
    }
    if (error instanceof MessageTooLarge) {
      return `The tool's output was larger than ${STDIO_MESSAGE_LIMIT}, the most the harness reads from an MCP server over stdio; the call failed. The server "${server}" is started again on its next use (its connection cannot go on after such a message).`;
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      return `The MCP server "${server}" stopped during the call; it is started again on its next use.`;
    }
    if (!connection.connected && connection.lastFailure !== undefined) {
      return `The MCP server "${server}" cannot be reached now (${connection.lastFailure}).`;
    }
    if (error instanceof McpError) return `The MCP server "${server}" refused the call: ${error.message.slice(0, 500)}`;
    return `The call to the MCP server "${server}" failed: ${error instanceof Error ? error.message.slice(0, 500) : 'unknown error'}`;
  }
}

/**
 * Resolves once every one of `connecting` has answered its first attempt, either way, or after
 * `waitMs`, or when `signal` aborts, whichever comes first.
 */
function firstAnswers(connecting: readonly ServerConnection[], waitMs: number, signal?: AbortSignal): Promise<void> {
  if (connecting.length === 0 || waitMs === 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, waitMs);
    signal?.addEventListener('abort', done, { once: true });
    void Promise.all(connecting.map((connection) => connection.ensure().catch(() => undefined))).then(done);
  });
}
