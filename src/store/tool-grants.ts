import type { Kysely, Migration } from 'kysely';
import type { ContextKey, ToolGrant, ToolGrants } from '../runtime/task-state.js';
import type { Database } from './database.js';

/** A tool a user allowed for good in a context (0018, TOOL-5). */
export interface ToolGrantsTable {
  tenant: string;
  owner: string;
  context_id: string;
  tool: string;
  granted_at: string;
}

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

/** 0018: the tools each user allowed for good in each context (`/approve always`, TOOL-5). */
export const toolGrantsMigration: Migration = {
  // Migrations work on the schema as it was then, not on today's `Database`.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('tool_grants')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('granted_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('tool_grants_pkey', ['tenant', 'owner', 'context_id', 'tool'])
      .execute();
  },
};
