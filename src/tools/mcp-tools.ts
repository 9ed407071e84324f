/**
 * The MCP servers of the config file as one {@link ToolBox}: every connected server's tools,
 * named `<server>_<tool>`; each call bounded by `toolTimeoutMs` and cancellable, its output
 * cut to `toolOutputChars`. A call that fails in any way (the tool says so, it times out, its
 * server crashed or cannot be reached) is an outcome with a text the model can read, so that
 * the turn goes on (TOOL-2); a dead server is connected again on its next use.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/mcp-servers.js';
import type { Logger } from '../log.js';
import { ToolNamer } from './names.js';
import { boundOutput, resultText, splitOutput } from './output.js';
import { ServerConnection, serverTarget } from './server-connection.js';
import type { ToolBox, ToolEntry, ToolOutcome } from './tool-box.js';

export interface McpToolsOptions {
  servers: Readonly<Record<string, McpServerConfig>>;
  /** Where `${VAR}` values come from. */
  env: Readonly<Record<string, string | undefined>>;
  toolTimeoutMs: number;
  toolOutputChars: number;
  log: Logger;
}

/** Whether a server's `approve` policy asks for a person's approval of calls to `tool` (its own name on the server). */
export function needsApproval(policy: McpServerConfig['approve'] | undefined, tool: string): boolean {
  if (policy === undefined || policy === 'never') return false;
  return policy === 'always' || policy.includes(tool);
}

export class McpTools implements ToolBox {
  private readonly connections: ServerConnection[];

  /** Throws `config_invalid` when a server names an unset environment variable. */
  constructor(private readonly options: McpToolsOptions) {
    this.connections = Object.entries(options.servers).map(
      ([name, server]) => new ServerConnection(name, serverTarget(name, server, options.env), { log: options.log, connectTimeoutMs: options.toolTimeoutMs }),
    );
  }

  /** Connects every server at once; one that fails is logged and tried again on next use. */
  async start(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.ensure().catch(() => undefined)));
  }

  /** True when the config names any server. */
  get configured(): boolean {
    return this.connections.length > 0;
  }

  /** The servers in config order, connected or not (and why not), with their tools as the model sees them (`/tools`). */
  servers(): { name: string; connected: boolean; failure?: string; tools: { name: string; description: string }[] }[] {
    const entries = this.entries();
    return this.connections.map((c) => ({
      name: c.name,
      connected: c.connected,
      failure: c.connected ? undefined : c.lastFailure,
      tools: entries.filter((e) => e.server === c.name).map((e) => ({ name: e.name, description: e.description })),
    }));
  }

  async list(): Promise<ToolEntry[]> {
    await Promise.all(this.connections.map((connection) => connection.ensure().catch(() => undefined)));
    return this.entries();
  }

  /** The tools of the servers connected now, named by the rule of `names.ts`. */
  private entries(): ToolEntry[] {
    const namer = new ToolNamer();
    const entries: ToolEntry[] = [];
    for (const connection of this.connections) {
      for (const tool of connection.listedTools()) {
        entries.push({
          name: namer.name(connection.name, tool.name),
          server: connection.name,
          tool: tool.name,
          description: tool.description ?? tool.title ?? '',
          inputSchema: tool.inputSchema as Record<string, unknown>,
          needsApproval: needsApproval(this.options.servers[connection.name]?.approve, tool.name),
          call: (input, signal) => this.call(connection, tool.name, input, signal),
        });
      }
    }
    return entries;
  }

  async close(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.close()));
  }

  private async call(connection: ServerConnection, tool: string, input: unknown, signal: AbortSignal): Promise<ToolOutcome> {
    const bound = (text: string) => boundOutput(text, this.options.toolOutputChars);
    // A signal of the call's own, tied to the turn's: the MCP client leaves its abort listener
    // on the signal it is given, and a turn's signal outlives many calls.
    const own = new AbortController();
    const onAbort = () => own.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      const args = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
      const result = await connection.call(tool, args, { signal: own.signal, timeoutMs: this.options.toolTimeoutMs });
      const text = resultText(result);
      return result.isError ? { status: 'failed', ...splitOutput(text || 'The tool reported an error.', this.options.toolOutputChars) } : { status: 'succeeded', ...splitOutput(text, this.options.toolOutputChars) };
    } catch (error) {
      if (signal.aborted) return { status: 'canceled', output: 'The call was canceled.' };
      return { status: 'failed', output: bound(this.failureText(connection, error)) };
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** What the model is told when a call failed outside the tool. */
  private failureText(connection: ServerConnection, error: unknown): string {
    const server = connection.name;
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return `The tool did not answer within ${this.options.toolTimeoutMs} ms; the call was canceled.`;
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
