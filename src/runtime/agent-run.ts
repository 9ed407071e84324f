/**
 * What a sub-task's metadata says about how its turns run, whichever instance runs them: the
 * tools it may use (TOOL-3), and the agent it runs as when the `delegate` tool started it.
 */
import { ALLOWED_TOOLS_KEY } from '../wire.js';
import type { AgentRun } from '../engine-ports.js';

/**
 * Task metadata key of a sub-task the `delegate` tool started (docs/agents.md): the agent it runs
 * as. Its turns are sent `systemPrompt` in place of the harness's, and offered `delegate` only
 * when `mayDelegate` and `depth` is under `agents.maxDepth`.
 */
export const AGENT_KEY = 'tiny-harness/agent';

/** The agent a task runs as (`AGENT_KEY`); none for a conversation, or a sub-task a command started. */
export function agentRunOf(metadata: Record<string, unknown> | undefined): AgentRun | undefined {
  const run = metadata?.[AGENT_KEY] as Partial<AgentRun> | undefined;
  if (typeof run?.name !== 'string' || typeof run.depth !== 'number' || typeof run.systemPrompt !== 'string')
    return undefined;
  return { name: run.name, depth: run.depth, systemPrompt: run.systemPrompt, mayDelegate: run.mayDelegate === true };
}

/** The `allowed-tools` a command file (or an agent's `tools`) gave the task it started (TOOL-3); none: every tool. */
export function allowedToolsOf(metadata: Record<string, unknown> | undefined): string[] | undefined {
  const rules = metadata?.[ALLOWED_TOOLS_KEY];
  return Array.isArray(rules) ? rules.filter((rule): rule is string => typeof rule === 'string') : undefined;
}
