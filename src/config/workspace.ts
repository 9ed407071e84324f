/** The `workspace` key of the config file: a root folder and the built-in tools offered on it (docs/workspace.md). */
import * as z from 'zod';

export const WORKSPACE_TOOLS = ['read', 'list', 'search', 'write', 'edit', 'shell', 'fetch'] as const;
export type WorkspaceToolName = (typeof WORKSPACE_TOOLS)[number];

export const DEFAULT_SHELL_TIMEOUT_MS = 30_000;
export const DEFAULT_SHELL_OUTPUT_CHARS = 20_000;
export const DEFAULT_FETCH_TIMEOUT_MS = 30_000;
export const DEFAULT_FETCH_MAX_BYTES = 2 * 1024 * 1024;
export const DEFAULT_FETCH_MAX_REDIRECTS = 5;

/** Claude Code's form: `Bash(git diff:*)` allows any command that starts with `git diff`; `Bash(ls)` allows `ls` alone. */
export const SHELL_RULE = /^Bash\(([^()]+)\)$/;

const shellShape = {
  allow: z
    .array(z.string().regex(SHELL_RULE, 'must be like "Bash(git diff:*)" or "Bash(ls)"'))
    .default([])
    .describe(
      "Commands `shell` runs without asking, in Claude Code's form: `Bash(git diff:*)` (that command, any arguments) or `Bash(ls)` (exactly that). Every other command waits for `/approve`.",
    ),
  timeoutMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(100, 'must be at least 100')
    .max(3_600_000)
    .default(DEFAULT_SHELL_TIMEOUT_MS)
    .describe('The longest one shell command may run, in milliseconds; then it is killed and the model told so.'),
  maxOutputChars: z
    .number()
    .int()
    .min(100, 'must be at least 100')
    .max(10_000_000)
    .default(DEFAULT_SHELL_OUTPUT_CHARS)
    .describe(
      "The most characters of a command's output (standard output and error) kept; the rest is cut, with a note.",
    ),
};

const shellSchema = z.strictObject(shellShape);

const fetchSchema = z.strictObject({
  timeoutMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(100, 'must be at least 100')
    .max(600_000)
    .default(DEFAULT_FETCH_TIMEOUT_MS)
    .describe('The longest one fetch may take, redirects and body included, in milliseconds.'),
  maxBytes: z
    .number()
    .int()
    .min(1024, 'must be at least 1024')
    .max(50 * 1024 * 1024)
    .default(DEFAULT_FETCH_MAX_BYTES)
    .describe("The most bytes of a response's body read; reading stops there and the model is told the body was cut."),
  maxRedirects: z
    .number()
    .int()
    .min(0)
    .max(20)
    .default(DEFAULT_FETCH_MAX_REDIRECTS)
    .describe('The most redirects followed; each new address is checked as the first was.'),
  approve: z
    .boolean()
    .default(false)
    .describe(
      "Whether each `fetch` call waits for `/approve`. Off by default: a GET runs at once, as Claude Code's WebFetch does.",
    ),
  allowPrivateNetworks: z
    .boolean()
    .default(false)
    .describe(
      'Whether `fetch` may reach loopback, private, link-local or otherwise non-public addresses. Off, such an address is refused after DNS, at every redirect too (the SSRF guard push uses). For tests and closed deployments only.',
    ),
});

export const workspaceSchema = z
  .strictObject({
    root: z
      .string()
      .min(1, 'must name a folder')
      .describe(
        'The folder the tools work in (relative to the folder the harness starts in). No tool reads or writes outside it, symlinks included.',
      ),
    tools: z
      .array(z.enum(WORKSPACE_TOOLS, { error: `must be one of ${WORKSPACE_TOOLS.join(', ')}` }))
      .default([])
      .describe(
        'The built-in tools offered, each `workspace_<tool>`: `read`, `list`, `search`, `write`, `edit`, `shell`, `fetch`. None unless listed.',
      ),
    approveWrites: z
      .boolean()
      .default(true)
      .describe('Whether each `write` and `edit` call waits for `/approve` (the default) or runs at once.'),
    shell: shellSchema
      .default(shellSchema.parse({}))
      .describe('How `shell` runs its commands and which run without asking.'),
    fetch: fetchSchema
      .default(fetchSchema.parse({}))
      .describe('How `fetch` reads a URL: its time, size and redirect bounds, and whether it asks.'),
  })
  .describe(
    'Built-in tools on a folder: read, list, search, write, edit, shell, and fetch of a URL (docs/workspace.md). Off unless configured.',
  );

export type WorkspaceConfig = z.output<typeof workspaceSchema>;
export type FetchConfig = z.output<typeof fetchSchema>;
