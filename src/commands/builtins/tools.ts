import type { CommandDefinition } from '@tiny-harness/commands-extension';
import type { ToolApprovalControl, ToolDirectory, ToolServerReport } from './ports.js';

const LINE_CHARS = 100;

/** The first line of a description, cut at a word to fit one line of a terminal. */
export function oneLine(text: string): string {
  const line = text.split('\n')[0]!.trim();
  if (line.length <= LINE_CHARS) return line;
  const cut = line.slice(0, LINE_CHARS);
  const space = cut.lastIndexOf(' ');
  // A first word longer than the line is cut where the line ends.
  return `${(space > 0 ? cut.slice(0, space) : cut.slice(0, LINE_CHARS - 1)).trimEnd()}…`;
}

/** What `/tools` says of a tool's approval: whether it asks, and whether this conversation allowed it for good. */
function approvalMark(asks: boolean, allowed: boolean): string {
  if (!asks) return '';
  return allowed ? ' [asks; allowed in this conversation]' : ' [asks]';
}

/** How a server stands, in the words of `/tools`. */
function standing(server: ToolServerReport): string {
  if (server.connected) return `connected, ${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}`;
  if (server.connecting) return 'connecting; its tools are offered once it answers';
  return `not connected${server.failure ? ` (${server.failure})` : ''}; tried again on next use`;
}

/**
 * `/tools`: each tool server, whether it is connecting, connected (or why not), and its tools,
 * one line each, marking those that ask for approval and those this conversation allowed for
 * good (`/approve always`, TOOL-5). Data: `{ servers, allowed: [tool names] }`.
 */
export function toolsCommand(directory: ToolDirectory, approvals?: ToolApprovalControl): CommandDefinition {
  return {
    name: 'tools',
    description:
      'List the tool servers, whether each is connected, and their tools, marking those that ask for approval',
    handler: async ({ task, callContext }) => {
      const servers = directory.servers();
      const allowed = new Set((await approvals?.allowed(task, callContext))?.map((grant) => grant.tool));
      const lines = servers.flatMap((server) => [
        `${server.name}: ${standing(server)}`,
        ...server.tools.map(
          (tool) =>
            `  ${tool.name}${approvalMark(tool.asks, allowed.has(tool.name))}${tool.description ? ` - ${oneLine(tool.description)}` : ''}`,
        ),
      ]);
      return { text: lines.join('\n'), data: { servers, allowed: [...allowed] } };
    },
  };
}
