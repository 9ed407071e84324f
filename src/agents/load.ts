/**
 * Reads an agents folder: every `*.md` file in it is an agent definition in Claude Code's format
 * (`.claude/agents/*.md`). Front matter: `name` and `description` (required), `tools` (a
 * comma-separated string or a list; absent: every tool) and `model` (absent or `inherit`: the
 * parent's model). The body is the sub-agent's system prompt. A file that cannot be an agent is
 * reported with the reason and skipped; the others still load. Keys Claude Code knows and this
 * harness does not use (`color`, ...) are let be.
 */
import { readdir } from 'node:fs/promises';
import { whyUnreadable } from '../file-commands/load.js';
import { readSkillFile } from '../skills/index.js';
import { allowedBy } from '../tools/index.js';
import { COMMAND_NAME_PATTERN } from '../wire.js';

/** The tool's name, and its server as `/tools`, traces and `allowed-tools` rules (`agents:*`) name it. */
export const DELEGATE_TOOL_NAME = 'delegate';
export const AGENTS_SERVER = 'agents';

/** The most agent files read from one folder. */
export const MAX_AGENT_FILES = 200;

/** The longest description kept: it goes into every turn's tool list. */
export const MAX_AGENT_DESCRIPTION_CHARS = 1024;

export interface Agent {
  name: string;
  description: string;
  /** The sub-agent's system prompt: the file's body. */
  prompt: string;
  /** As written; none (or `inherit`): the parent's model. */
  model?: string;
  /** The only tools it may call (TOOL-3); none: all of them. */
  tools?: string[];
  /** Its `tools` allow `delegate` (by name or `agents:*`): only then may it delegate in turn. */
  mayDelegate: boolean;
  /** The file's name in the folder. */
  fileName: string;
}

export interface LoadedAgents {
  /** In name order. */
  agents: Agent[];
  /** One line per skipped file: `<file>: <reason>` (the file's name only, no path). */
  problems: string[];
  /** Set when the folder itself cannot be listed: why, without the path. */
  folderProblem?: string;
}

/** Reads every agent of `dir`. Never throws. */
export async function loadAgents(dir: string): Promise<LoadedAgents> {
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries
      .filter((entry) => !entry.name.startsWith('.') && entry.name.endsWith('.md') && !entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    return { agents: [], problems: [], folderProblem: whyUnreadable(error) };
  }
  const result: LoadedAgents = { agents: [], problems: [] };
  if (names.length > MAX_AGENT_FILES) {
    result.problems.push(
      `${names.length} *.md files, more than the ${MAX_AGENT_FILES} read; those after ${names[MAX_AGENT_FILES - 1]} are skipped`,
    );
  }
  const byName = new Map<string, Agent>();
  for (const fileName of names.slice(0, MAX_AGENT_FILES)) {
    const outcome = await loadOne(dir, fileName);
    if (outcome === undefined) continue;
    if (typeof outcome === 'string') result.problems.push(`${fileName}: ${outcome}`);
    else if (byName.has(outcome.name))
      result.problems.push(
        `${fileName}: the agent "${outcome.name}" comes from ${byName.get(outcome.name)!.fileName} already`,
      );
    else byName.set(outcome.name, outcome);
  }
  result.agents = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  return result;
}

/** One file: its agent, why it is skipped, or nothing when it vanished since the listing. */
async function loadOne(dir: string, fileName: string): Promise<Agent | string | undefined> {
  const read = await readSkillFile(dir, fileName);
  if (!read.ok) return read.missing ? undefined : read.problem;
  // Loaded on first use, as the command files' parser is: a start with no agent never loads YAML.
  const { parseYaml, splitFrontMatter } = await import('../file-commands/front-matter.js');
  const split = splitFrontMatter(read.text);
  if (!split.ok) return split.reasons.join('; ');
  const yaml = parseYaml(split.yaml, split.yamlFirstLine);
  if (!yaml.ok) return yaml.reasons.join('; ');
  const { name, description, tools, model } = (yaml.value ?? {}) as Record<string, unknown>;
  if (typeof name !== 'string' || !COMMAND_NAME_PATTERN.test(name)) {
    return `"name" must be set and match ${COMMAND_NAME_PATTERN.source} (lower-case letters, digits and "-", starting with a letter)`;
  }
  if (typeof description !== 'string' || description.trim() === '') {
    return '"description" must be set: it tells the model when to delegate to the agent';
  }
  if (description.length > MAX_AGENT_DESCRIPTION_CHARS) {
    return `"description" has ${description.length} characters, over the limit of ${MAX_AGENT_DESCRIPTION_CHARS}`;
  }
  if (model !== undefined && (typeof model !== 'string' || model.trim() === '')) {
    return '"model" must be a model (`provider:model`, or a name offered here) or `inherit`';
  }
  const toolList = toolsOf(tools);
  if (typeof toolList === 'string') return toolList;
  const prompt = split.body.trim();
  if (!prompt) return "the body is empty: it is the sub-agent's system prompt";
  const delegate = { name: DELEGATE_TOOL_NAME, server: AGENTS_SERVER };
  return {
    name,
    description: description.trim(),
    prompt,
    ...(model === undefined || model.trim() === 'inherit' ? {} : { model: model.trim() }),
    ...(toolList ? { tools: toolList } : {}),
    mayDelegate: toolList !== undefined && allowedBy(toolList, delegate),
    fileName,
  };
}

/** `tools` as Claude Code writes it: `Read, Grep` or a list; absent: undefined (every tool). */
function toolsOf(tools: unknown): string[] | undefined | string {
  if (tools === undefined || tools === null) return undefined;
  const list = typeof tools === 'string' ? tools.split(',') : tools;
  if (!Array.isArray(list) || !list.every((tool) => typeof tool === 'string'))
    return '"tools" must be a comma-separated list of tool names, or a list of them';
  return list.map((tool) => tool.trim()).filter(Boolean);
}
