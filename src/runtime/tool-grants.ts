import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { ToolEntry } from '../tools/index.js';
import { contextKey } from './task-models.js';
import type { ToolGrants } from '../ports.js';

/**
 * A turn's tools, those the user allowed for good in the conversation (`/approve always`,
 * TOOL-5) no longer asking. Read afresh each turn: a grant or a revoke on any instance holds
 * from the next turn.
 */
export async function grantedEntries(
  entries: readonly ToolEntry[],
  grants: Pick<ToolGrants, 'list'> | undefined,
  contextId: string,
  callContext: ServerCallContext | undefined,
): Promise<ToolEntry[]> {
  if (!grants || !callContext || !entries.some((entry) => entry.needsApproval)) return [...entries];
  const granted = new Set((await grants.list(contextKey(contextId, callContext))).map((grant) => grant.tool));
  return entries.map((entry) =>
    entry.needsApproval && granted.has(entry.name) ? { ...entry, needsApproval: false } : entry,
  );
}
