import type { CommandDefinition } from '../command.js';
import type { ToolDirectory } from './ports.js';

/** The first line of a description, cut to fit one line of a terminal. */
function oneLine(text: string): string {
  const line = text.split('\n')[0]!.trim();
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

/** `/tools`: each tool server, whether it is connected (or why not), and its tools, one line each. */
export function toolsCommand(directory: ToolDirectory): CommandDefinition {
  return {
    name: 'tools',
    description: 'List the tool servers, whether each is connected, and their tools',
    handler: () => {
      const servers = directory.servers();
      const lines = servers.flatMap((server) => [
        `${server.name}: ${server.connected ? `connected, ${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}` : `not connected${server.failure ? ` (${server.failure})` : ''}; tried again on next use`}`,
        ...server.tools.map((tool) => `  ${tool.name}${tool.description ? ` - ${oneLine(tool.description)}` : ''}`),
      ]);
      return { text: lines.join('\n'), data: { servers } };
    },
  };
}
