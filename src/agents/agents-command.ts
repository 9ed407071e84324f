import type { CommandDefinition, CommandResult } from '../commands/index.js';
import { fullModelId } from '../wire.js';
import type { Agent } from './load.js';

/** What `/agents` reads: the agents loaded now, the files skipped (with why), and the models offered. */
export interface AgentsNow {
  list(): readonly Agent[];
  skipped(): readonly string[];
  offeredModels(): readonly string[];
}

/** `/agents`: the sub-agents the model may delegate to, with their model and tools (docs/agents.md). */
export function agentsCommand(agents: AgentsNow): CommandDefinition {
  return {
    name: 'agents',
    description: 'List the sub-agents the model may delegate to, from the agents folder',
    handler: (): CommandResult => {
      const offered = agents.offeredModels();
      const list = agents.list().map((agent) => {
        const model = agent.model === undefined ? 'inherit' : fullModelId(agent.model, offered);
        return {
          name: agent.name,
          description: agent.description,
          model,
          modelOffered: model === 'inherit' || offered.includes(model),
          tools: agent.tools ?? null,
        };
      });
      const skipped = [...agents.skipped()];
      const lines =
        list.length === 0
          ? ['No agents.']
          : list.flatMap((agent) => [
              `${agent.name}: ${agent.description}`,
              `  model: ${agent.model}${agent.modelOffered ? '' : ' (not offered here: delegating to it fails)'}; ` +
                `tools: ${agent.tools ? agent.tools.join(', ') || '(none)' : 'all'}`,
            ]);
      if (skipped.length > 0) lines.push('', 'Skipped:', ...skipped.map((line) => `  ${line}`));
      return { text: lines.join('\n'), data: { agents: list, skipped } };
    },
  };
}
