/**
 * Sub-agents for the model: one tool, `delegate`, whose description lists every agent's name and
 * description, as the `skill` tool lists skills. A call starts the agent as a sub-task and
 * returns its reply (`Delegator`). The AI SDK runs the calls of one model step at once; at most
 * `maxParallel` of one turn's run together, the others waiting for a place.
 */
import type { ToolDirectory } from '../commands/index.js';
import type { ToolBox, ToolEntry, ToolList, ToolOutcome, ToolTurn } from '../tools/index.js';
import type { Delegator } from '../engine-ports.js';
import { AGENTS_SERVER, DELEGATE_TOOL_NAME, type Agent } from './load.js';

export interface DelegationLimits {
  /** The most delegations of one turn that run at once. */
  maxParallel: number;
  /** The longest one call may take, its wait for a place included; then its sub-task is canceled. */
  timeoutMs: number;
}

/** The `delegate` tool of one turn. */
export function delegateToolEntry(
  agents: readonly Agent[],
  turn: ToolTurn,
  delegator: Delegator,
  limits: DelegationLimits,
): ToolEntry {
  const byName = new Map(agents.map((agent) => [agent.name, agent]));
  const places = new Places(limits.maxParallel);
  return {
    name: DELEGATE_TOOL_NAME,
    server: AGENTS_SERVER,
    tool: DELEGATE_TOOL_NAME,
    description: delegateDescription(agents),
    inputSchema: {
      type: 'object',
      properties: {
        agent: { type: 'string', enum: agents.map((agent) => agent.name), description: 'The agent.' },
        prompt: { type: 'string', description: 'The work, said in full.' },
      },
      required: ['agent', 'prompt'],
      additionalProperties: false,
    },
    needsApproval: false,
    timeoutMs: limits.timeoutMs,
    call: async (input: unknown, callSignal: AbortSignal): Promise<ToolOutcome> => {
      const { agent: name, prompt } = (input ?? {}) as { agent?: unknown; prompt?: unknown };
      const agent = typeof name === 'string' ? byName.get(name) : undefined;
      if (!agent) {
        return {
          status: 'failed',
          output: `There is no agent named ${JSON.stringify(name)}. Agents: ${[...byName.keys()].join(', ')}.`,
        };
      }
      if (typeof prompt !== 'string' || prompt.trim() === '')
        return { status: 'failed', output: '"prompt" must say what the agent should do.' };
      // Cleared once the call ends: no timer outlives it.
      const timer = new AbortController();
      const timeout = setTimeout(() => timer.abort(), limits.timeoutMs);
      let outcome: ToolOutcome;
      try {
        const signal = AbortSignal.any([callSignal, timer.signal]);
        outcome = (await places.take(signal))
          ? await delegator.delegate(turn, agent, prompt, signal).finally(() => places.give())
          : { status: 'canceled', output: `The sub-agent ${agent.name} was not started.` };
      } finally {
        clearTimeout(timeout);
      }
      if (outcome.status !== 'canceled' || !timer.signal.aborted || callSignal.aborted) return outcome;
      return {
        status: 'failed',
        output: `The sub-agent ${agent.name} took longer than the ${limits.timeoutMs} ms agents.timeoutMs allows. ${outcome.output}`,
      };
    },
  };
}

/** The tool's description: what it does, then every agent by name and description. */
function delegateDescription(agents: readonly Agent[]): string {
  const listing = agents.map((agent) => `- ${agent.name}: ${agent.description}`).join('\n');
  return (
    'Hands a piece of work to a sub-agent, which works on it on its own, with its own instructions and tools, ' +
    'and returns its final answer. Give it everything it needs in `prompt`: it does not see this conversation. ' +
    `Several calls in one step run at the same time.\n\nAgents:\n${listing}`
  );
}

/** What `/tools` lists: `directory`'s servers, then the `delegate` tool as the server `agents` while there are agents. */
export function withAgentServer(directory: ToolDirectory, agents: () => readonly Agent[]): ToolDirectory {
  return {
    servers() {
      const listed = directory.servers();
      const now = agents();
      if (now.length === 0) return listed;
      const tools = [{ name: DELEGATE_TOOL_NAME, description: delegateDescription(now), asks: false }];
      return [...listed, { name: AGENTS_SERVER, connecting: false, connected: true, tools }];
    },
  };
}

/**
 * `tools` with the `delegate` tool added for a turn that may delegate (`Delegator.mayDelegate`), while
 * there are agents. A list made for no turn (none given) has none: the tool needs its task.
 */
export function withDelegateTool(
  tools: ToolBox,
  agents: () => readonly Agent[],
  delegator: Delegator,
  limits: DelegationLimits,
): ToolBox {
  return {
    async list(signal, turn): Promise<ToolList> {
      const listed = await tools.list(signal, turn);
      const now = agents();
      if (now.length === 0 || !turn || !delegator.mayDelegate(turn)) return listed;
      return { ...listed, tools: [...listed.tools, delegateToolEntry(now, turn, delegator, limits)] };
    },
    close: () => tools.close(),
  };
}

/** At most `size` holders at once; the others wait in order, or give up when their signal aborts. */
class Places {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Resolves true with a place held, or false once `signal` aborted first. */
  async take(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return false;
    if (this.free > 0) {
      this.free -= 1;
      return true;
    }
    return new Promise((resolve) => {
      const granted = () => {
        signal.removeEventListener('abort', gaveUp);
        resolve(true);
      };
      const gaveUp = () => {
        const index = this.waiting.indexOf(granted);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(false);
      };
      this.waiting.push(granted);
      signal.addEventListener('abort', gaveUp, { once: true });
    });
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}
