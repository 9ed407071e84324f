/**
 * One MCP server, as the harness keeps it: connected with the official MCP SDK's client over
 * stdio or Streamable HTTP, its tool and prompt lists kept current by
 * `notifications/tools/list_changed` and `notifications/prompts/list_changed`,
 * and connected again on the next use after it died (a crash, a closed connection), with a
 * log line each way. Connecting is single-flight: turns that need the server at once share
 * one attempt. Until its first attempt settles the server is `connecting` (a turn waits for it
 * a while, `McpTools.list`); a shutdown meanwhile stops the attempt (and a stdio server's
 * process) rather than wait for an answer that may never come.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { tracingFetch } from '../telemetry/propagation.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, ElicitRequest, GetPromptResult, Prompt, Tool } from '@modelcontextprotocol/sdk/types.js';
import { isStdioServer, type McpServerConfig } from '../config/mcp-servers.js';
import { describeError, type Logger } from '../log.js';
import { VERSION } from '../version.js';
import { expandEnv, expandRecord } from './expand-env.js';
import { mcpClientSdk, type McpClientSdk } from './mcp-sdk.js';
import { CallClock } from './call-clock.js';
import type { AskUser, UserAnswer } from './tool-box.js';

/** How a server is reached, its `${VAR}`s expanded: what a connection needs and no more. */
export type ServerTarget =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { kind: 'http'; url: URL; headers: Record<string, string> };

/** The target of a configured server; throws `config_invalid` naming an unset variable. */
export function serverTarget(
  name: string,
  server: McpServerConfig,
  env: Readonly<Record<string, string | undefined>>,
): ServerTarget {
  const where = `mcpServers.${name}`;
  if (isStdioServer(server)) {
    return {
      kind: 'stdio',
      command: expandEnv(server.command, env, `${where}.command`),
      args: server.args.map((arg, i) => expandEnv(arg, env, `${where}.args[${i}]`)),
      env: expandRecord(server.env, env, `${where}.env`),
      cwd: server.cwd === undefined ? undefined : expandEnv(server.cwd, env, `${where}.cwd`),
    };
  }
  return {
    kind: 'http',
    url: new URL(expandEnv(server.url, env, `${where}.url`)),
    headers: expandRecord(server.headers, env, `${where}.headers`),
  };
}

/**
 * The most bytes of one message read from a server over stdio: the MCP SDK's default, named
 * here because past it the SDK drops the message and closes the connection, and the harness
 * says so in these terms.
 */
export const STDIO_MESSAGE_MAX_BYTES = 10 * 1024 * 1024;

/** The limit as people read it: "10 MiB". */
export const STDIO_MESSAGE_LIMIT = `${STDIO_MESSAGE_MAX_BYTES / 1024 / 1024} MiB`;

/** A call cut short because its server sent a message over `STDIO_MESSAGE_MAX_BYTES`: its output, most likely. */
export class MessageTooLarge extends Error {
  constructor(server: string) {
    super(`The MCP server "${server}" sent a message larger than ${STDIO_MESSAGE_LIMIT}.`);
    this.name = 'MessageTooLarge';
  }
}

/** The SDK's stdio read buffer refusing a message over its limit (it then closes the connection). */
function isOverReadLimit(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('ReadBuffer exceeded maximum size');
}

const SHUTTING_DOWN = 'The harness is shutting down.';

type ElicitParams = ElicitRequest['params'];

export interface CallOptions {
  /** Aborting it cancels the call (`notifications/cancelled`). */
  signal: AbortSignal;
  /** The call's bound, stopped while the user is asked a question. */
  timeoutMs: number;
  /** How the server's questions during the call reach the user; none: declined. */
  ask?: AskUser;
}

/**
 * The longest a request may wait by the SDK's own timer (its setTimeout's limit): the harness
 * bounds a tool call itself (`CallClock`), and a call's questions on their own.
 */
const SDK_TIMEOUT_MS = 2 ** 31 - 1;

const DECLINED: UserAnswer = { action: 'decline' };

export class ServerConnection {
  private client: Client | undefined;
  /** The attempt to connect under way, shared by everyone who needs the server meanwhile. */
  private attempt: Promise<Client> | undefined;
  /** The transport of that attempt, closed by a shutdown that comes first. */
  private opening: Transport | undefined;
  /** Whether an attempt has settled yet, either way. */
  private answered = false;
  private tools: Tool[] = [];
  /** The prompts as last listed; kept while the server is away, so its commands do not come and go with it. */
  private prompts: Prompt[] = [];
  private readonly promptListeners = new Set<() => void>();
  private lost = false;
  private closed = false;
  /**
   * The calls in flight, oldest first, each with how it asks the user: MCP does not say which
   * call a question belongs to, so a question goes to the oldest call in flight on the server.
   */
  private readonly inFlight: { ask: AskUser }[] = [];
  /** URL-mode questions waiting for `notifications/elicitation/complete`, by elicitation id. */
  private readonly completions = new Map<string, () => void>();
  /** Clients whose server sent a message over the limit, which closed them. */
  private readonly overLimit = new WeakSet<Client>();
  /** Why the last attempt to connect failed, for `/tools` and the model. */
  lastFailure: string | undefined;

  constructor(
    readonly name: string,
    private readonly target: ServerTarget,
    private readonly options: { log: Logger; connectTimeoutMs: number },
  ) {}

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** True while the first attempt to connect is under way: the server has not answered yet. */
  get connecting(): boolean {
    return !this.answered && this.attempt !== undefined;
  }

  /** The server's tools as last listed (empty while it is not connected). */
  listedTools(): readonly Tool[] {
    return this.client ? this.tools : [];
  }

  /** The server's prompts as last listed (kept while it is away). */
  listedPrompts(): readonly Prompt[] {
    return this.prompts;
  }

  /** Tells `listener` each time the prompt list is read anew (at each connection, and on `list_changed`). */
  onPromptsChanged(listener: () => void): () => void {
    this.promptListeners.add(listener);
    return () => this.promptListeners.delete(listener);
  }

  async getPrompt(name: string, args: Record<string, string>, timeoutMs: number): Promise<GetPromptResult> {
    const client = await this.ensure();
    return client.getPrompt({ name, arguments: args }, { timeout: timeoutMs });
  }

  /** The connected client, connecting (again) first when needed. Rejects when the server cannot be reached. */
  ensure(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    if (this.closed) return Promise.reject(new Error(SHUTTING_DOWN));
    this.attempt ??= this.connect().finally(() => {
      this.attempt = undefined;
      this.answered = true;
    });
    return this.attempt;
  }

  async call(tool: string, input: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const client = await this.ensure();
    const clock = new CallClock(options.timeoutMs, options.signal);
    const ask = options.ask;
    const asking = {
      ask: (question: Parameters<AskUser>[0]) => (ask ? clock.stopped(() => ask(question)) : Promise.resolve(DECLINED)),
    };
    this.inFlight.push(asking);
    try {
      return (await client.callTool({ name: tool, arguments: input }, undefined, {
        signal: clock.signal,
        timeout: SDK_TIMEOUT_MS,
      })) as CallToolResult;
    } catch (error) {
      // The oversized message was never read, so which call's it was is not known: the one in flight.
      if (this.overLimit.has(client)) throw new MessageTooLarge(this.name);
      if (clock.timedOut) {
        const { McpError, ErrorCode } = await mcpClientSdk();
        throw new McpError(ErrorCode.RequestTimeout, 'Request timed out');
      }
      throw error;
    } finally {
      clock.stop();
      this.inFlight.splice(this.inFlight.indexOf(asking), 1);
    }
  }

  /** A server's question (`elicitation/create`): put to the user by the oldest call in flight, declined when none is. */
  private async elicit(params: ElicitParams): Promise<UserAnswer> {
    const asking = this.inFlight[0];
    if (!asking) return DECLINED;
    if (params.mode !== 'url') {
      const schema = (params.requestedSchema ?? { type: 'object', properties: {} }) as Record<string, unknown>;
      return asking.ask({ mode: 'form', message: params.message, schema });
    }
    const id = params.elicitationId;
    const completed = new Promise<void>((resolve) => this.completions.set(id, resolve));
    try {
      return await asking.ask({ mode: 'url', message: params.message, url: params.url, completed });
    } finally {
      this.completions.delete(id);
    }
  }

  /** Ends the connection, and an attempt under way: its transport is closed, a stdio server's process stopped. */
  async close(): Promise<void> {
    this.closed = true;
    await this.opening?.close().catch(() => undefined);
    await this.attempt?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  private setPrompts(prompts: Prompt[]): void {
    this.prompts = prompts;
    for (const listener of this.promptListeners) listener();
  }

  private async connect(): Promise<Client> {
    let prompts: Prompt[] = [];
    const sdk = await mcpClientSdk();
    if (this.closed) throw new Error(SHUTTING_DOWN);
    const client = new sdk.Client(
      { name: 'tiny-harness', version: VERSION },
      {
        // Questions to the user during a call, in forms and as links to open (docs/tools.md).
        capabilities: { elicitation: { form: {}, url: {} } },
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (error)
                this.options.log.warn('MCP server tool list could not be read again', {
                  server: this.name,
                  error: describeError(error),
                });
              else if (tools && client === this.client) this.tools = tools;
            },
          },
          prompts: {
            onChanged: (error, prompts) => {
              if (error)
                this.options.log.warn('MCP server prompt list could not be read again', {
                  server: this.name,
                  error: describeError(error),
                });
              else if (prompts && client === this.client) this.setPrompts(prompts);
            },
          },
        },
      },
    );
    client.setRequestHandler(sdk.ElicitRequestSchema, async (request) => ({ ...(await this.elicit(request.params)) }));
    client.setNotificationHandler(sdk.ElicitationCompleteNotificationSchema, (notification) =>
      this.completions.get(notification.params.elicitationId)?.(),
    );
    client.onclose = () => {
      if (client !== this.client) return;
      this.client = undefined;
      this.lost = true;
      if (this.closed) return;
      if (this.overLimit.has(client))
        this.options.log.warn(
          `MCP server sent a message larger than ${STDIO_MESSAGE_LIMIT}; its connection is closed, and it is started again on next use`,
          { server: this.name },
        );
      else
        this.options.log.warn('MCP server connection lost; it is connected again on next use', { server: this.name });
    };
    // A failed request rejects its own promise and a lost connection calls onclose; a message
    // over the limit is told here only, just before the SDK closes the connection because of it.
    client.onerror = (error) => {
      if (isOverReadLimit(error)) this.overLimit.add(client);
    };
    const transport = this.transport(sdk);
    this.opening = transport;
    try {
      await client.connect(transport, { timeout: this.options.connectTimeoutMs });
      this.tools = await listAllTools(client, this.options.connectTimeoutMs);
      prompts = await listAllPrompts(client, this.options.connectTimeoutMs);
    } catch (error) {
      await client.close().catch(() => undefined);
      // Stopped by a shutdown: not a failure of the server's.
      if (this.closed) throw new Error(SHUTTING_DOWN);
      this.lastFailure = describeError(error);
      this.options.log.warn('MCP server could not be connected', { server: this.name, error: this.lastFailure });
      throw error;
    } finally {
      this.opening = undefined;
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new Error(SHUTTING_DOWN);
    }
    this.client = client;
    this.lastFailure = undefined;
    this.setPrompts(prompts);
    if (this.lost) this.options.log.info('MCP server connected again', { server: this.name, tools: this.tools.length });
    else this.options.log.info('MCP server connected', { server: this.name, tools: this.tools.length });
    this.lost = false;
    return client;
  }

  private transport(sdk: McpClientSdk): Transport {
    const { target } = this;
    if (target.kind === 'http')
      return new sdk.StreamableHTTPClientTransport(target.url, {
        requestInit: { headers: target.headers },
        fetch: tracingFetch(),
      });
    // The server's standard error is not ours to print: it may hold anything the server saw.
    return new sdk.StdioClientTransport({
      command: target.command,
      args: target.args,
      env: target.env,
      cwd: target.cwd,
      stderr: 'ignore',
      maxBufferSize: STDIO_MESSAGE_MAX_BYTES,
    });
  }
}

/** Every page of `prompts/list`; none from a server without prompts. */
async function listAllPrompts(client: Client, timeoutMs: number): Promise<Prompt[]> {
  if (!client.getServerCapabilities()?.prompts) return [];
  return everyPage(async (cursor) => {
    const page = await client.listPrompts(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    return { items: page.prompts, nextCursor: page.nextCursor };
  });
}

/** Every page of `tools/list`; none from a server without tools. */
async function listAllTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  return everyPage(async (cursor) => {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    return { items: page.tools, nextCursor: page.nextCursor };
  });
}

/** MCP's cursor pagination: ask again with `nextCursor` until a page comes without one. */
async function everyPage<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}
