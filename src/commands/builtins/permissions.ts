import { CommandUsageError, type CommandDefinition } from '@tiny-harness/commands-extension';
import type { ToolApprovalControl } from './ports.js';

/**
 * `/permissions [revoke <tool>]`: the tools the caller allowed for good in this conversation
 * with `/approve always`, and taking one back (TOOL-5). Reply data: `{ allowed: [{ tool,
 * grantedAt }] }`, and `revoked: <tool>` after a revoke.
 */
export function permissionsCommand(approvals: ToolApprovalControl): CommandDefinition {
  return {
    name: 'permissions',
    description: 'List the tools allowed for good in this conversation (/approve always), or revoke one',
    argumentHint: '[revoke <tool>]',
    handler: async ({ task, args, callContext }) => {
      const [verb = '', tool = '', ...rest] = args.split(/\s+/).filter(Boolean);
      if (verb === '') {
        const allowed = await approvals.allowed(task, callContext);
        const text =
          allowed.length === 0
            ? 'No tool is allowed for good in this conversation: tools that ask for approval ask each time. /approve always allows one.'
            : `Allowed without asking in this conversation:\n${allowed.map((grant) => `- ${grant.tool} (since ${grant.grantedAt})`).join('\n')}\n/permissions revoke <tool> makes one ask again.`;
        return { text, data: { allowed } };
      }
      if (verb !== 'revoke' || tool === '' || rest.length > 0)
        throw new CommandUsageError(
          'Usage: /permissions to list the allowed tools, /permissions revoke <tool> to take one back.',
        );
      if (!(await approvals.revoke(task, tool, callContext))) {
        const allowed = await approvals.allowed(task, callContext);
        const names = allowed.map((grant) => grant.tool).join(', ');
        throw new CommandUsageError(
          `${tool} is not allowed for good in this conversation. ${names ? `Allowed: ${names}.` : 'No tool is.'}`,
        );
      }
      const allowed = await approvals.allowed(task, callContext);
      return { text: `${tool} asks for approval again in this conversation.`, data: { revoked: tool, allowed } };
    },
  };
}
