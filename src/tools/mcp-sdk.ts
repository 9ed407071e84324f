/**
 * The MCP SDK's client side, loaded on the first connection to a server: a harness whose config
 * names no MCP server never parses it (with the ajv and zod copies it brings, about a tenth of
 * what start-up parsed; bench/RESULTS.md, "Start-up").
 */
async function importSdk() {
  const [client, stdio, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    ElicitRequestSchema: types.ElicitRequestSchema,
    ElicitationCompleteNotificationSchema: types.ElicitationCompleteNotificationSchema,
  };
}

export type McpClientSdk = Awaited<ReturnType<typeof importSdk>>;

let loaded: Promise<McpClientSdk> | undefined;

/** The SDK's client, transports and errors; imported once, on the first call. */
export function mcpClientSdk(): Promise<McpClientSdk> {
  loaded ??= importSdk();
  return loaded;
}
