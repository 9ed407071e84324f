import { sql, type Kysely, type Transaction } from 'kysely';
import type { LRUCache } from 'lru-cache';
import { byteBoundedCache } from './byte-bounded-cache.js';
import type { Database } from './database.js';
import type { ContextKey, TaskLinks, TaskStateStore, TokenUsage } from '../ports.js';
import { readTogether } from './reads-together.js';
import { QueryTemplate } from './query-template.js';

// Reads a command's report makes when they are not cached, built once (`query-template.ts`).

/** A task's token usage per model, by first use. */
const USAGE = new QueryTemplate<
  Database,
  readonly [string],
  { model: string; input_tokens: number | string; output_tokens: number | string }
>(1, (db, taskId) =>
  db
    .selectFrom('task_usage')
    .select(['model', 'input_tokens', 'output_tokens'])
    .where('task_id', '=', taskId)
    .orderBy('first_seq')
    .orderBy('model'),
);

/** Both directions of a task's links: its own row (its parent) and its children's. */
const LINKS = new QueryTemplate<Database, readonly [string, string], { parent_id: string; child_id: string }>(
  2,
  (db, childId, parentId) =>
    db
      .selectFrom('task_links')
      .select(['parent_id', 'child_id'])
      .where((eb) => eb.or([eb('child_id', '=', childId), eb('parent_id', '=', parentId)]))
      .orderBy('seq'),
);

/** A task's model choice and its context's, a scalar subquery each; the context's only when `inContext`. */
function modelChoice(inContext: boolean) {
  return new QueryTemplate<
    Database,
    readonly [string, string, string, string],
    { task_model: string | null; context_model: string | null }
  >(4, (db, taskId, tenant, owner, contextId) =>
    db.selectNoFrom((eb) => [
      eb.selectFrom('task_settings').select('model').where('task_id', '=', taskId).as('task_model'),
      eb
        .selectFrom('context_models')
        .select('model')
        .where('tenant', '=', tenant)
        .where('owner', '=', owner)
        .where('context_id', '=', contextId)
        .where(sql<boolean>`${sql.lit(inContext ? 1 : 0)} = 1`)
        .as('context_model'),
    ]),
  );
}
const MODEL_CHOICE_IN_CONTEXT = modelChoice(true);
const MODEL_CHOICE = modelChoice(false);

/** 4 MiB: with the task images' 60 MiB (`task-store.ts`), the store's default 64 MiB. */
export const DEFAULT_STATE_CACHE_BYTES = 4 * 2 ** 20;

/** What the cached values weigh besides their text: an array and its objects. */
const VALUE_BYTES = 64;
const ITEM_BYTES = 48;

/** A model choice known to be none (lru-cache takes an undefined value as a deletion). */
const NO_MODEL = Symbol('no model');

type CachedState = string | typeof NO_MODEL | TokenUsage[] | TaskLinks;

/** What a cached value weighs, from the lengths of its texts. */
function stateBytes(value: CachedState): number {
  if (value === NO_MODEL) return VALUE_BYTES;
  if (typeof value === 'string') return VALUE_BYTES + 2 * value.length;
  if (Array.isArray(value))
    return VALUE_BYTES + value.reduce((sum, entry) => sum + ITEM_BYTES + 2 * entry.model.length, 0);
  return (
    VALUE_BYTES +
    2 * (value.parent?.length ?? 0) +
    value.children.reduce((sum, id) => sum + ITEM_BYTES + 2 * id.length, 0)
  );
}

export interface SqlTaskStateStoreOptions {
  /**
   * The most memory, in bytes (estimated), that the model choices, usage and links kept in
   * memory may take together, least recently used dropped first. Default 4 MiB; 0: none kept.
   */
  cacheBytes?: number;
  /**
   * Other processes write the same database (instances sharing PostgreSQL), e.g. a `/model`
   * sent to another instance: nothing is kept in memory, each read asks the database. Checking
   * a kept value would cost the same round trip as reading it, since every read is one small
   * query by key (see the figures in docs/storage.md). Default false.
   */
  shared?: boolean;
}

/**
 * The harness's own per-task state (model choice, token usage) in tables of its own, out of
 * reach of the task saves the SDK makes after every event: a `/model` command that lands
 * while a turn is running is never overwritten by that turn's next save. A context's model
 * is kept per user (`ContextKey`), as everything of a context must be.
 */
export class SqlTaskStateStore implements TaskStateStore {
  /**
   * Links are read on every load of a task (they are merged into its metadata), and model
   * choices and usage by every turn and every `/status`, so all are kept in memory once read
   * or written; only this store writes them (unless `shared`: then none is kept). One cache,
   * bounded in bytes, holds the four kinds under prefixed keys; a value dropped from it is read
   * again on demand. A model choice known to be none is kept as `NO_MODEL`.
   */
  private readonly cache: LRUCache<string, CachedState>;
  /**
   * Counts the starts and ends of writes: a read during which a write started or ended does
   * not keep what it read in memory, which may be from before the write.
   */
  private writes = 0;

  constructor(
    private readonly db: Kysely<Database>,
    options: SqlTaskStateStoreOptions = {},
  ) {
    this.cache = byteBoundedCache(options.shared ? 0 : (options.cacheBytes ?? DEFAULT_STATE_CACHE_BYTES), stateBytes);
  }

  async getTaskModel(taskId: string): Promise<string | undefined> {
    const key = `model:${taskId}`;
    const known = this.cache.get(key) as string | typeof NO_MODEL | undefined;
    if (known !== undefined) return known === NO_MODEL ? undefined : known;
    const writes = this.writes;
    const row = await this.db
      .selectFrom('task_settings')
      .select('model')
      .where('task_id', '=', taskId)
      .executeTakeFirst();
    if (writes === this.writes) this.rememberModel(key, row?.model);
    return row?.model;
  }

  async getModelChoice(taskId: string, context: ContextKey | undefined): Promise<string | undefined> {
    const taskKey = `model:${taskId}`;
    const contextKey = context && contextCacheKey(context);
    const own = this.cache.get(taskKey) as string | typeof NO_MODEL | undefined;
    if (typeof own === 'string') return own;
    if (own === NO_MODEL) {
      if (!contextKey) return undefined;
      const latest = this.cache.get(contextKey) as string | typeof NO_MODEL | undefined;
      if (latest !== undefined) return latest === NO_MODEL ? undefined : latest;
    }
    const writes = this.writes;
    // The task's choice and the context's in one statement, a scalar subquery each.
    const [row] = await readTogether(
      this.db,
      (context ? MODEL_CHOICE_IN_CONTEXT : MODEL_CHOICE).compile(this.db, [
        taskId,
        context?.tenant ?? '',
        context?.owner ?? '',
        context?.contextId ?? '',
      ]),
    );
    if (!row) throw new Error('A select without FROM answered no row.');
    if (writes === this.writes) {
      this.rememberModel(taskKey, row.task_model ?? undefined);
      if (contextKey) this.rememberModel(contextKey, row.context_model ?? undefined);
    }
    return row.task_model ?? row.context_model ?? undefined;
  }

  /** Both rows in one transaction, so the task and its context never disagree after a crash. */
  async setTaskModel(taskId: string, context: ContextKey | undefined, model: string): Promise<void> {
    await this.writing(() =>
      this.db.transaction().execute(async (trx) => {
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
      }),
    );
    this.rememberModel(`model:${taskId}`, model);
    if (context !== undefined) this.rememberModel(contextCacheKey(context), model);
  }

  async getContextModel(context: ContextKey): Promise<string | undefined> {
    const key = contextCacheKey(context);
    const known = this.cache.get(key) as string | typeof NO_MODEL | undefined;
    if (known !== undefined) return known === NO_MODEL ? undefined : known;
    const writes = this.writes;
    const row = await this.db
      .selectFrom('context_models')
      .select('model')
      .where('tenant', '=', context.tenant)
      .where('owner', '=', context.owner)
      .where('context_id', '=', context.contextId)
      .executeTakeFirst();
    if (writes === this.writes) this.rememberModel(key, row?.model);
    return row?.model;
  }

  /**
   * Adds to the running totals with one upsert (`total = total + new`), so concurrent calls
   * never lose an addition. A model's first use takes the next position among the task's
   * models; the position is kept on later additions.
   */
  async addUsage(taskId: string, usage: TokenUsage): Promise<void> {
    await this.writing(() =>
      this.db.transaction().execute(async (trx) => {
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
        const last = { model: usage.model, input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
        await trx
          .insertInto('task_last_usage')
          .values({ task_id: taskId, ...last })
          .onConflict((oc) => oc.column('task_id').doUpdateSet(last))
          .execute();
      }),
    );
    this.cache.delete(`usage:${taskId}`); // read again, totals and order as stored
    this.cache.delete(`last-usage:${taskId}`);
  }

  async getLastUsage(taskId: string): Promise<TokenUsage | undefined> {
    const key = `last-usage:${taskId}`;
    // Cached as a list of none or one, a shape the cache weighs already.
    const known = this.cache.get(key) as TokenUsage[] | undefined;
    if (known) return known[0] && { ...known[0] };
    const writes = this.writes;
    const row = await this.db
      .selectFrom('task_last_usage')
      .select(['model', 'input_tokens', 'output_tokens'])
      .where('task_id', '=', taskId)
      .executeTakeFirst();
    const usage = row && {
      model: row.model,
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
    };
    if (writes === this.writes) this.cache.set(key, usage ? [usage] : []);
    return usage && { ...usage };
  }

  /** One entry per model, in first-use order. */
  async getUsage(taskId: string): Promise<TokenUsage[]> {
    const key = `usage:${taskId}`;
    const known = this.cache.get(key) as TokenUsage[] | undefined;
    if (known) return known.map((entry) => ({ ...entry }));
    const writes = this.writes;
    const rows = await readTogether(this.db, USAGE.compile(this.db, [taskId]));
    const usage = rows.map((row) => ({
      model: row.model,
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
    }));
    if (writes === this.writes) this.cache.set(key, usage);
    return usage.map((entry) => ({ ...entry }));
  }

  /**
   * Writes what makes `childId` a sub-task of `parentId` running `model` (its link and its
   * model) inside a transaction the caller runs, the one that stores the sub-task itself, so
   * that a sub-task is never stored without them or they without it. `transaction` runs the
   * given writes in its transaction and resolves once that has committed.
   */
  async writeSubtask(
    parentId: string,
    childId: string,
    model: string,
    transaction: (writes: (trx: Transaction<Database>) => Promise<void>) => Promise<void>,
  ): Promise<void> {
    await this.writing(() =>
      transaction(async (trx) => {
        await writeLink(trx, parentId, childId);
        await trx
          .insertInto('task_settings')
          .values({ task_id: childId, model })
          .onConflict((oc) => oc.column('task_id').doUpdateSet({ model }))
          .execute();
      }),
    );
    this.cache.delete(`links:${parentId}`);
    this.cache.delete(`links:${childId}`);
    this.rememberModel(`model:${childId}`, model);
  }

  /** Writes a new task's model inside the transaction that stores the task (a fork, CMD-37), as `writeSubtask` does. */
  async writeTaskModel(
    taskId: string,
    model: string,
    transaction: (writes: (trx: Transaction<Database>) => Promise<void>) => Promise<void>,
  ): Promise<void> {
    await this.writing(() =>
      transaction(async (trx) => {
        await trx
          .insertInto('task_settings')
          .values({ task_id: taskId, model })
          .onConflict((oc) => oc.column('task_id').doUpdateSet({ model }))
          .execute();
      }),
    );
    this.rememberModel(`model:${taskId}`, model);
  }

  async getLinks(taskId: string): Promise<TaskLinks> {
    const key = `links:${taskId}`;
    const known = this.cache.get(key) as TaskLinks | undefined;
    if (known) return { parent: known.parent, children: [...known.children] };
    const writes = this.writes;
    // Both directions in one statement: a task's own link row (its parent) and its children's rows.
    const rows = await readTogether(this.db, LINKS.compile(this.db, [taskId, taskId]));
    const links: TaskLinks = {
      parent: rows.find((row) => row.child_id === taskId)?.parent_id,
      children: rows.filter((row) => row.parent_id === taskId).map((row) => row.child_id),
    };
    if (writes === this.writes) this.cache.set(key, links);
    return { parent: links.parent, children: [...links.children] };
  }

  /** A model choice read or written (undefined: none chosen, which is worth keeping too). */
  private rememberModel(key: string, model: string | undefined): void {
    this.cache.set(key, model ?? NO_MODEL);
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

/** Links a sub-task to its parent, after the parent's other sub-tasks (a second link of the same child is ignored). */
async function writeLink(trx: Transaction<Database>, parentId: string, childId: string): Promise<void> {
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
}

/** The cache key of a user's context. */
function contextCacheKey(context: ContextKey): string {
  return `context:${context.tenant}\0${context.owner}\0${context.contextId}`;
}
