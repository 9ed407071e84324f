import type { Kysely } from 'kysely';
import type { ContextKey, TaskLinks, TaskStateStore, TokenUsage } from '../runtime/task-state.js';
import type { Database } from './database.js';

/** Entries each of the in-memory caches below holds before it is emptied. */
const CACHE_LIMIT = 10_000;

/**
 * The harness's own per-task state (model choice, token usage) in tables of its own, out of
 * reach of the task saves the SDK makes after every event: a `/model` command that lands
 * while a turn is running is never overwritten by that turn's next save. A context's model
 * is kept per user (`ContextKey`), as everything of a context must be.
 */
export class SqlTaskStateStore implements TaskStateStore {
  /**
   * Links are read on every load of a task (they are merged into its metadata), so they are
   * kept in memory once read; only this store writes them. Bounded: cleared when it grows past
   * the limit, and read again on demand.
   */
  private readonly links = new Map<string, TaskLinks>();
  /** Model choices and usage, read by every turn and every `/status`, kept the same way. */
  private readonly taskModels = new Map<string, string | undefined>();
  private readonly contextModels = new Map<string, string | undefined>();
  private readonly usage = new Map<string, TokenUsage[]>();
  /**
   * Counts the starts and ends of writes: a read during which a write started or ended does
   * not keep what it read in memory, which may be from before the write.
   */
  private writes = 0;

  constructor(private readonly db: Kysely<Database>) {}

  async getTaskModel(taskId: string): Promise<string | undefined> {
    if (this.taskModels.has(taskId)) return this.taskModels.get(taskId);
    const writes = this.writes;
    const row = await this.db.selectFrom('task_settings').select('model').where('task_id', '=', taskId).executeTakeFirst();
    if (writes === this.writes) remember(this.taskModels, taskId, row?.model);
    return row?.model;
  }

  /** Both rows in one transaction, so the task and its context never disagree after a crash. */
  async setTaskModel(taskId: string, context: ContextKey | undefined, model: string): Promise<void> {
    await this.writing(() => this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('task_settings')
        .values({ task_id: taskId, model })
        .onConflict((oc) => oc.column('task_id').doUpdateSet({ model }))
        .execute();
      if (context === undefined) return;
      await trx
        .insertInto('context_models')
        .values({ tenant: context.tenant, owner: context.owner, context_id: context.contextId, model })
        .onConflict((oc) => oc.columns(['tenant', 'owner', 'context_id']).doUpdateSet({ model }))
        .execute();
    }));
    remember(this.taskModels, taskId, model);
    if (context !== undefined) remember(this.contextModels, contextCacheKey(context), model);
  }

  async getContextModel(context: ContextKey): Promise<string | undefined> {
    const key = contextCacheKey(context);
    if (this.contextModels.has(key)) return this.contextModels.get(key);
    const writes = this.writes;
    const row = await this.db
      .selectFrom('context_models')
      .select('model')
      .where('tenant', '=', context.tenant)
      .where('owner', '=', context.owner)
      .where('context_id', '=', context.contextId)
      .executeTakeFirst();
    if (writes === this.writes) remember(this.contextModels, key, row?.model);
    return row?.model;
  }

  /**
   * Adds to the running totals with one upsert (`total = total + new`), so concurrent calls
   * never lose an addition. A model's first use takes the next position among the task's
   * models; the position is kept on later additions.
   */
  async addUsage(taskId: string, usage: TokenUsage): Promise<void> {
    await this.writing(() => this.db.transaction().execute(async (trx) => {
      const counted = await trx
        .selectFrom('task_usage')
        .select((eb) => eb.fn.countAll().as('models'))
        .where('task_id', '=', taskId)
        .executeTakeFirst();
      await trx
        .insertInto('task_usage')
        .values({
          task_id: taskId,
          model: usage.model,
          input_tokens: usage.inputTokens,
          output_tokens: usage.outputTokens,
          first_seq: Number(counted?.models ?? 0),
        })
        .onConflict((oc) =>
          oc.columns(['task_id', 'model']).doUpdateSet((eb) => ({
            input_tokens: eb('task_usage.input_tokens', '+', eb.ref('excluded.input_tokens')),
            output_tokens: eb('task_usage.output_tokens', '+', eb.ref('excluded.output_tokens')),
          })),
        )
        .execute();
    }));
    this.usage.delete(taskId); // read again, totals and order as stored
  }

  /** One entry per model, in first-use order. */
  async getUsage(taskId: string): Promise<TokenUsage[]> {
    const known = this.usage.get(taskId);
    if (known) return known.map((entry) => ({ ...entry }));
    const writes = this.writes;
    const rows = await this.db
      .selectFrom('task_usage')
      .select(['model', 'input_tokens', 'output_tokens'])
      .where('task_id', '=', taskId)
      .orderBy('first_seq')
      .orderBy('model')
      .execute();
    const usage = rows.map((row) => ({ model: row.model, inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens) }));
    if (writes === this.writes) remember(this.usage, taskId, usage);
    return usage.map((entry) => ({ ...entry }));
  }

  async linkSubtask(parentId: string, childId: string): Promise<void> {
    await this.writing(() => this.db.transaction().execute(async (trx) => {
      const counted = await trx
        .selectFrom('task_links')
        .select((eb) => eb.fn.countAll().as('children'))
        .where('parent_id', '=', parentId)
        .executeTakeFirst();
      await trx
        .insertInto('task_links')
        .values({ child_id: childId, parent_id: parentId, seq: Number(counted?.children ?? 0) })
        .onConflict((oc) => oc.column('child_id').doNothing())
        .execute();
    }));
    this.links.delete(parentId);
    this.links.delete(childId);
  }

  async getLinks(taskId: string): Promise<TaskLinks> {
    const known = this.links.get(taskId);
    if (known) return { parent: known.parent, children: [...known.children] };
    const writes = this.writes;
    const [parent, children] = await Promise.all([
      this.db.selectFrom('task_links').select('parent_id').where('child_id', '=', taskId).executeTakeFirst(),
      this.db.selectFrom('task_links').select('child_id').where('parent_id', '=', taskId).orderBy('seq').execute(),
    ]);
    const links: TaskLinks = { parent: parent?.parent_id, children: children.map((row) => row.child_id) };
    if (writes === this.writes) remember(this.links, taskId, links);
    return { parent: links.parent, children: [...links.children] };
  }

  private async writing<T>(write: () => Promise<T>): Promise<T> {
    this.writes += 1;
    try {
      return await write();
    } finally {
      this.writes += 1;
    }
  }
}

/** One string per user and context, for the in-memory cache. */
function contextCacheKey(context: ContextKey): string {
  return `${context.tenant}\0${context.owner}\0${context.contextId}`;
}

/** Keeps a value read or written, dropping everything once the map is full: read again on demand. */
function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  if (cache.size >= CACHE_LIMIT && !cache.has(key)) cache.clear();
  cache.set(key, value);
}
