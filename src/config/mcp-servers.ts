/**
 * The `mcpServers` part of the config file, in the shape `.mcp.json` and Claude Desktop use:
 * a stdio server (`command`, `args`, `env`, `cwd`) or a Streamable HTTP one (`url`,
 * `headers`). Values may name environment variables as `${VAR}` or `${VAR:-default}`; they are
 * expanded at start-up (`tools/expand-env.ts`). As with provider keys, the file never holds a
 * secret: a header or variable whose name looks like one must take its value from `${VAR}`.
 */
import * as z from 'zod';

/** Server names prefix their tools' names (`fs` → `fs_read_file`): short, and safe in a function name. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

const SECRET_LIKE_NAME = /key|token|secret|passw|credential|auth|bearer|cookie/i;
const NAMES_A_VARIABLE = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/;
const SECRET_ADVICE = 'looks like a secret: take its value from the environment, e.g. "Bearer ${SEARCH_TOKEN}"';

/** Names → values where a secret-like name must take its value from a `${VAR}`. */
const secretSafeRecord = z.record(z.string().min(1), z.string()).superRefine((record, ctx) => {
  for (const [name, value] of Object.entries(record)) {
    if (SECRET_LIKE_NAME.test(name) && !NAMES_A_VARIABLE.test(value))
      ctx.addIssue({ code: 'custom', path: [name], message: SECRET_ADVICE });
  }
});

/**
 * Which calls of a server's tools wait for a person's approval: none (the default), all, or
 * those named (by the tool's own name on the server). A call that needs approval pauses the
 * turn until `/approve` or `/deny` answers it (CMD-33).
 */
const approvePolicy = z
  .union([z.literal('never'), z.literal('always'), z.array(z.string().min(1)).min(1)], {
    error: 'must be "never", "always" or a list of tool names',
  })
  .default('never')
  .describe(
    "Which calls wait for a person's approval (docs/tools.md): `never`, `always`, or a list of the server's own tool names (`delete`, not `search_delete`).",
  );

const description = z.string().max(200).optional().describe('A line about the server, for people reading the file.');

/** Who a command, or a server's prompts, are offered to (issue 38, docs/security.md). */
export const visibilitySchema = z.enum(['public', 'authenticated'], {
  error: 'must be "public" (anyone) or "authenticated" (signed-in callers only)',
});

const visibility = visibilitySchema
  .optional()
  .describe(
    "Who the server's prompts, as commands, are offered to (unset: `public`, anyone): `authenticated` lists them on the extended card only and lets only signed-in callers run them (docs/security.md).",
  );

const typeText =
  'Filled in from the keys when left out: `command` means `stdio`, `url` Streamable HTTP (`http`, also spelled `streamable-http`).';

const stdioServer = z.strictObject({
  type: z.literal('stdio').describe(typeText),
  command: z
    .string()
    .min(1)
    .describe(
      'The program to start, found on PATH; it speaks MCP on its standard input and output. Its standard error is dropped.',
    ),
  args: z.array(z.string()).default([]).describe("The program's arguments."),
  env: secretSafeRecord
    .default({})
    .describe("Added to a small safe environment (PATH, HOME, ...), not to the harness's whole one."),
  cwd: z.string().min(1).optional().describe("The folder the program starts in; the harness's own without it."),
  approve: approvePolicy,
  visibility,
  description,
});

const httpServer = z.strictObject({
  type: z.enum(['http', 'streamable-http']).describe(typeText),
  url: z
    .string()
    .regex(/^https?:\/\/\S+$/, 'must be an http:// or https:// URL')
    .describe("The server's Streamable HTTP endpoint, e.g. `http://127.0.0.1:9000/mcp`."),
  headers: secretSafeRecord
    .default({})
    .describe(
      'Sent with every request; a secret-looking one (`Authorization`, ...) must take its value from `${VAR}`.',
    ),
  approve: approvePolicy,
  visibility,
  description,
});

/** `.mcp.json` files often leave `type` out: the keys say which kind a server is. */
function withType(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value) || 'type' in value) return value;
  if ('command' in value) return { type: 'stdio', ...value };
  if ('url' in value) return { type: 'http', ...value };
  return value;
}

export const mcpServerSchema = z.preprocess(
  withType,
  z.discriminatedUnion('type', [stdioServer, httpServer], {
    error: (issue) =>
      issue.code === 'invalid_union' ? 'a server needs "command" (stdio) or "url" (Streamable HTTP)' : undefined,
  }),
);

export const mcpServersSchema = z.record(
  z.string().regex(MCP_SERVER_NAME_PATTERN, 'a server name must use only A-Z, a-z, 0-9, "_" and "-" (at most 32)'),
  mcpServerSchema,
  {
    error: (issue) => (issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined),
  },
);

export type McpServerConfig = z.output<typeof mcpServerSchema>;
export type McpStdioServerConfig = z.output<typeof stdioServer>;
export type McpHttpServerConfig = z.output<typeof httpServer>;

/** True for a server started as a child process. */
export function isStdioServer(server: McpServerConfig): server is McpStdioServerConfig {
  return server.type === 'stdio';
}

/** How long a question an MCP server asks the user waits for an answer (10 minutes): a person's time, not a tool's. */
export const DEFAULT_ELICITATION_TIMEOUT_MS = 600_000;

/** The config key `elicitationTimeoutMs` (issue 39). */
export const elicitationTimeoutMs = z
  .number()
  .int()
  .min(100, 'must be at least 100')
  .max(86_400_000)
  .default(DEFAULT_ELICITATION_TIMEOUT_MS)
  .describe(
    "How long, in milliseconds, an MCP server's question to the user during a tool call (elicitation) waits for an answer; past it the question is declined, and the server and the user are told so (docs/tools.md).",
  );
