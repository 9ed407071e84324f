import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import type { ContextKey, ToolGrant, ToolGrants } from '../ports.js';

/**
 * `/approve always` grants, read afresh by each turn that offers tools (no cache: a revoke on
 * one instance holds on the next turn of every other).
 */
export class SqlToolGrants implements ToolGrants {
  constructor(private readonly db: Kysely<Database>) {}

  async grant(context: ContextKey, tools: readonly string[]): Promise<void> {
    if (tools.length === 0) return;
    const grantedAt = new Date().toISOString();
    await this.db
      .insertInto('tool_grants')
      .values(
        [...new Set(tools)].map((tool) => ({
          tenant: context.tenant,
          owner: context.owner,
          context_id: context.contextId,
          tool,
          granted_at: grantedAt,
        })),
      )
      .onConflict((oc) => oc.columns(['tenant', 'owner', 'context_id', 'tool']).doNothing())
      .execute();
  }

  async list(context: ContextKey): Promise<ToolGrant[]> {
    const rows = await this.db
      .selectFrom('tool_grants')
      .select(['tool', 'granted_at'])
      .where('tenant', '=', context.tenant)
      .where('owner', '=', context.owner)
      .where('context_id', '=', context.contextId)
      .orderBy('tool')
      .execute();
    return rows.map((row) => ({ tool: row.tool, grantedAt: row.granted_at }));
  }

  async revoke(context: ContextKey, tool: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('tool_grants')
      .where('tenant', '=', context.tenant)
      .where('owner', '=', context.owner)
      .where('context_id', '=', context.contextId)
      .where('tool', '=', tool)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
