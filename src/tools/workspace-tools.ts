/**
 * The built-in workspace tools (config `workspace`, docs/workspace.md) as tool entries of the
 * server `workspace`: offered next to MCP servers' tools, shown by `/tools`, reported in the
 * tool-calls extension and traced as they are. Every path stays under the root (TOOL-6);
 * `write` and `edit` wait for approval unless `approveWrites` is off; `shell` waits unless a
 * `Bash(...)` rule grants the command; `fetch` waits only when `fetch.approve` is on.
 */
import type { WorkspaceConfig, WorkspaceToolName } from '../config/workspace.js';
import { HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import { splitOutput } from './output.js';
import type { ToolEntry, ToolOutcome } from './tool-box.js';
import { fetchUrl } from './workspace-fetch.js';
import { editTool, listTool, readTool, searchTool, writeTool } from './workspace-files.js';
import { WorkspaceRefusal, WorkspaceRoot } from './workspace-root.js';
import { commandOf, runShell, shellAllowed } from './workspace-shell.js';

export const WORKSPACE_SERVER = 'workspace';

/** A built-in tool before it is named: the namer of the tool box gives it `workspace_<tool>`. */
export type BuiltinTool = Omit<ToolEntry, 'name'>;

const pathField = (what: string) => ({ type: 'string', description: `${what}, relative to the workspace root.` });

const DESCRIPTIONS: Record<WorkspaceToolName, { description: string; inputSchema: Record<string, unknown> }> = {
  read: {
    description: 'Reads a text file of the workspace.',
    inputSchema: { type: 'object', properties: { path: pathField('The file') }, required: ['path'] },
  },
  list: {
    description: 'Lists a folder of the workspace: folders end in "/", symlinks in "@".',
    inputSchema: { type: 'object', properties: { path: pathField('The folder (default: the root)') } },
  },
  search: {
    description: 'Finds the lines that match a regular expression in the files of the workspace, as "file:line: text".',
    inputSchema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'A JavaScript regular expression.' },
        path: pathField('The folder to search (default: the root)'),
        glob: { type: 'string', description: 'Only files whose path matches this glob, e.g. "**/*.ts".' },
      },
      required: ['pattern'],
    },
  },
  write: {
    description: 'Writes a whole file of the workspace, creating it (and its folders) if needed.',
    inputSchema: {
      type: 'object',
      properties: { path: pathField('The file'), content: { type: 'string' } },
      required: ['path', 'content'],
    },
  },
  edit: {
    description: 'Replaces a piece of text in a file of the workspace: "old" must occur once unless "all" is set.',
    inputSchema: {
      type: 'object',
      properties: {
        path: pathField('The file'),
        old: { type: 'string', description: 'The exact text to replace.' },
        new: { type: 'string', description: 'The text to put in its place.' },
        all: { type: 'boolean', description: 'Replace every occurrence.' },
      },
      required: ['path', 'old', 'new'],
    },
  },
  shell: {
    description: 'Runs a shell command in the workspace root and returns its output and exit code.',
    inputSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
  fetch: {
    description:
      'GETs an http(s) URL and returns its body as text (HTML as the server sent it); binary bodies are refused.',
    inputSchema: {
      type: 'object',
      properties: { url: { type: 'string', description: 'An absolute http:// or https:// URL.' } },
      required: ['url'],
    },
  },
};

export interface WorkspaceToolsOptions {
  config: WorkspaceConfig;
  /** Where `shell` takes its small environment from. */
  env: Readonly<Record<string, string | undefined>>;
  toolOutputChars: number;
  log: Logger;
}

export class WorkspaceTools {
  private constructor(
    private readonly root: WorkspaceRoot,
    private readonly options: WorkspaceToolsOptions,
  ) {}

  /** Throws `WorkspaceRefusal` when the root is not an existing folder. */
  static async open(options: WorkspaceToolsOptions): Promise<WorkspaceTools> {
    let root: WorkspaceRoot;
    try {
      root = await WorkspaceRoot.open(options.config.root);
    } catch {
      throw new WorkspaceRefusal(`The workspace root "${options.config.root}" is not an existing folder.`);
    }
    return new WorkspaceTools(root, options);
  }

  /** The configured tools, in the config's order. */
  entries(): BuiltinTool[] {
    const { config } = this.options;
    return [...new Set(config.tools)].map((tool) => ({
      server: WORKSPACE_SERVER,
      tool,
      ...DESCRIPTIONS[tool],
      needsApproval:
        tool === 'shell'
          ? (input: unknown) => !shellAllowed(config.shell.allow, safeCommand(input))
          : tool === 'fetch'
            ? config.fetch.approve
            : (tool === 'write' || tool === 'edit') && config.approveWrites,
      call: (input, signal) => this.call(tool, input, signal),
    }));
  }

  private async call(tool: WorkspaceToolName, input: unknown, signal: AbortSignal): Promise<ToolOutcome> {
    const started = performance.now();
    const outcome = await this.run(tool, input, signal);
    this.options.log.info('tool call', {
      server: WORKSPACE_SERVER,
      tool,
      status: outcome.status,
      ms: Math.round(performance.now() - started),
    });
    return outcome;
  }

  private async run(tool: WorkspaceToolName, input: unknown, signal: AbortSignal): Promise<ToolOutcome> {
    const bound = (text: string) => splitOutput(text, this.options.toolOutputChars);
    try {
      if (tool === 'shell') {
        const { shell } = this.options.config;
        const { ok, output } = await runShell(
          commandOf(input),
          { ...shell, cwd: this.root.real, env: this.options.env },
          signal,
        );
        if (signal.aborted) return { status: 'canceled', output: 'The call was canceled.' };
        return { status: ok ? 'succeeded' : 'failed', ...bound(output) };
      }
      if (tool === 'fetch') {
        const { ok, text } = await fetchUrl(input, this.options.config.fetch, signal);
        return { status: ok ? 'succeeded' : 'failed', ...bound(text) };
      }
      const run = { read: readTool, list: listTool, write: writeTool, edit: editTool } as const;
      const text = tool === 'search' ? await searchTool(this.root, input, signal) : await run[tool](this.root, input);
      return { status: 'succeeded', ...bound(text) };
    } catch (error) {
      if (signal.aborted) return { status: 'canceled', output: 'The call was canceled.' };
      // A system error's message names absolute paths: only its code is told.
      const why =
        error instanceof WorkspaceRefusal
          ? error.message
          : `The ${tool} failed (${(error as NodeJS.ErrnoException).code ?? 'unexpected error'}).`;
      return { status: 'failed', output: why };
    }
  }
}

/**
 * The workspace tools of the config, or `undefined` when it has none. Throws `config_invalid`
 * when the root is not an existing folder: a harness that would offer tools on nothing is
 * stopped at start-up, with the root named as the file wrote it.
 */
export async function openWorkspace(
  options: {
    config: { workspace?: WorkspaceConfig; toolOutputChars: number; mcpServers: Readonly<Record<string, unknown>> };
    env?: Readonly<Record<string, string | undefined>>;
  },
  log: Logger,
): Promise<WorkspaceTools | undefined> {
  const { workspace, toolOutputChars } = options.config;
  if (workspace === undefined || workspace.tools.length === 0) return undefined;
  // The built-in tools are the server `workspace`: an MCP server of that name would be mistaken for it.
  if (Object.hasOwn(options.config.mcpServers, WORKSPACE_SERVER))
    throw new HarnessError(
      'config_invalid',
      `mcpServers.${WORKSPACE_SERVER}: the name is taken by the built-in workspace tools; give the server another name.`,
    );
  try {
    return await WorkspaceTools.open({ config: workspace, env: options.env ?? process.env, toolOutputChars, log });
  } catch (error) {
    throw new HarnessError(
      'config_invalid',
      error instanceof Error ? error.message : 'The workspace cannot be opened.',
    );
  }
}

function safeCommand(input: unknown): string {
  try {
    return commandOf(input);
  } catch {
    return '';
  }
}
