/**
 * The commands read from folders and tool servers, registered after the built-ins and the
 * embedder's commands, which none of them may replace: command files, skills (`/<skill-name>`),
 * agents, `/tools` when skills or agents are the only tools, and MCP prompts. File commands and
 * skills run inline on the task (CMD-38) or as sub-tasks (`context: fork`).
 */
import { join } from 'node:path';
import type { AgentsFolder } from './agents/index.js';
import type { ModelCatalog } from './models/catalog.js';
import type { TaskEngine } from './runtime/engine.js';
import type { Subtasks } from './runtime/subtasks.js';
import type { TurnLimit } from './runtime/turn/turn-limit.js';
import type { TurnQueue } from './runtime/turn/turn-queue.js';
import type { SkillsFolder } from './skills/index.js';
import type { McpTools } from './tools/index.js';
import { toolsCommand, type CommandRegistry, type ToolDirectory } from './commands/index.js';
import { DEFAULT_SHELL_OUTPUT_CHARS, DEFAULT_SHELL_TIMEOUT_MS } from './config/workspace.js';
import { CommandFolder } from './file-commands/folder.js';
import type { HarnessOptions } from './harness-options.js';
import { describeError, type Logger } from './log.js';
import { CommandTurns } from './runtime/turn/command-turns.js';
import { PromptCommands } from './runtime/prompt-commands.js';
import type { CommandStarter } from './engine-ports.js';

export async function startCommandSources(
  options: HarnessOptions,
  {
    catalog,
    tools,
    skills,
    agents,
  }: { catalog: ModelCatalog; tools: McpTools; skills: SkillsFolder; agents: AgentsFolder },
  {
    engine,
    queue,
    subtasks,
    turnLimit,
  }: { engine: TaskEngine; queue: TurnQueue; subtasks: Subtasks; turnLimit: TurnLimit },
  { registry, toolDirectory }: { registry: CommandRegistry; toolDirectory: ToolDirectory },
  log: Logger,
): Promise<CommandFolder> {
  const { config } = options;
  const inline = new CommandTurns({
    engine,
    queue,
    offer: catalog,
    limit: turnLimit,
    onError: (error, what, task) => log.warn(`${what} failed`, { task, error: describeError(error) }),
  });
  const starter: CommandStarter = {
    start: (parent, instruction, subtaskOptions) => subtasks.start(parent, instruction, subtaskOptions),
    prepare: (task, prompt, turnOptions) => inline.prepare(task, prompt, turnOptions),
  };
  const { workspace } = config;
  // After the built-ins and the embedder's commands, which no file may replace.
  const commandFolder = new CommandFolder({
    dir: options.commandsDir ?? join(options.dataDir, 'commands'),
    registry,
    starter,
    grants: {
      root: workspace?.root,
      allowShell: config.commands.allowShell,
      timeoutMs: workspace?.shell.timeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS,
      maxOutputChars: workspace?.shell.maxOutputChars ?? DEFAULT_SHELL_OUTPUT_CHARS,
      env: options.env ?? process.env,
    },
    log,
  });
  await commandFolder.load();
  // After the command files, which keep their names; before the prompts, which skip a skill's.
  await skills.load({ registry, starter });
  await agents.load();
  // Skills and agents alone are tools too: with either at start and no other tools, `/tools` lists them.
  if (!tools.configured && (skills.list().length > 0 || agents.list().length > 0))
    registry.register(toolsCommand(toolDirectory));
  // After the command files: a prompt never takes a name a file has.
  new PromptCommands({
    registry,
    source: tools,
    starter: subtasks,
    log,
    visibility: (server) => config.mcpServers[server]?.visibility,
  }).start();
  return commandFolder;
}
