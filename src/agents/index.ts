/** Sub-agents (Claude Code's agent files): the model's `delegate` tool and `/agents` (docs/agents.md). */
export { loadAgents, AGENTS_SERVER, DELEGATE_TOOL_NAME, type Agent, type LoadedAgents } from './load.js';
export { AgentsFolder, type AgentsFolderOptions } from './agents-folder.js';
export { delegateToolEntry, withAgentServer, withDelegateTool, type DelegationLimits } from './delegate-tool.js';
export { agentsCommand, type AgentsNow } from './agents-command.js';
