import type { CommandDefinition } from '@tiny-harness/commands-extension';
import type { ToolDirectory, ToolServerReport } from './ports.js';

/** The first line of a description, cut to fit one line of a terminal. */
function oneLine(text: string): string {
  const line = text.split('\n')[0]!.trim();
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

/** How a server stands, in the words of `/tools`. */
function standing(server: ToolServerReport): string {
  if (server.connected) return `connected, ${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}`;
  if (server.connecting) return 'connecting; its tools are offered once it answers';
  return `not connected${server.failure ? ` (${server.failure})` : ''}; tried again on next use`;
}

/** `/tools`: each tool server, whether it is connecting, connected (or why not), and its tools, one line each. */
export function toolsCommand(directory: ToolDirectory): CommandDefinition {
  return {
    name: 'tools',
    description: 'List the tool servers, whether each is connected, and their tools',
    handler: () => {
      const servers = directory.servers();
      const lines = servers.flatMap((server) => [
        `${server.name}: ${standing(server)}`,
        ...server.tools.map((tool) => `  ${tool.name}${tool.description ? ` - ${oneLine(tool.description)}` : ''}`),
      ]);
      return { text: lines.join('\n'), data: { servers } };
    },
  };
}
