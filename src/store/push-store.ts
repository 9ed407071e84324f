import { sql, type Kysely } from 'kysely';
import type { Database } from './database.js';
import { isPostgres } from './dialect.js';
import { SqlPushOutbox, toConfig } from './push-outbox.js';

import type { TaskScope } from './task-cache.js';
import type { ConfigCursor, PushConfigBounds, PutOutcome, StoredPushConfig } from '../ports.js';

/**
 * Push notifications' records (docs/push.md): each task's configs, which belong to the task's
 * user, bounded in number per task and per user; and, inherited, the outbox of the deliveries
 * owed to them (`push-outbox.ts`), written with the events that owe them.
 */

export class SqlPushStore extends SqlPushOutbox {
  /**
   * Alone (SQLite: this process is the only writer), the tasks that have or had a config, so
   * that a write of any other task skips the outbox's statement (`mayOwe`); undefined when shared.
   */
  private readonly withConfigs: Set<string> | undefined;

  constructor(db: Kysely<Database>, options: { shared: boolean } = { shared: true }) {
    super(db);
    this.withConfigs = options.shared ? undefined : new Set();
  }

  /**
   * Alone: reads which tasks have or had configs (those with deliveries kept had one, whose
   * failed deliveries stay after it is deleted); before the first write.
   */
  async load(): Promise<void> {
    if (!this.withConfigs) return;
    const rows = await this.db
      .selectFrom('push_configs')
      .select('task_id')
      .union(this.db.selectFrom('push_deliveries').select('task_id'))
      .execute();
    for (const row of rows) this.withConfigs.add(row.task_id);
  }

  /** Whether a write of the task may owe deliveries: false only when it is known to have no config. */
  mayOwe(taskId: string): boolean {
    return this.withConfigs?.has(taskId) ?? true;
  }

  /** Alone, a task that never had a config has no delivery, failed or not: no statement (`/status` asks). */
  override async failedCount(taskId: string): Promise<number> {
    return this.mayOwe(taskId) ? super.failedCount(taskId) : 0;
  }

  /**
   * Stores (or replaces) a config of a task stored in `scope`, within `bounds`: a new config
   * (an id the task does not have) is refused once the task has `perTask` configs or the user
   * `perUser`; replacing one is always allowed. `newTask`: the task is about to be created by a
   * turn or command that holds its id (nobody else knows it), so it is not looked for. One
   * transaction, under the task row's lock and a lock of the user's (PostgreSQL): instances
   * creating configs at once cannot pass a bound together.
   */
  async put(
    scope: TaskScope,
    config: StoredPushConfig,
    nowMs: number,
    bounds: PushConfigBounds,
    newTask = false,
  ): Promise<PutOutcome> {
    const row = {
      url: config.url,
      token: config.token,
      auth_json: config.authentication ? JSON.stringify(config.authentication) : null,
    };
    const postgres = isPostgres(this.db);
    if (newTask && !postgres) return this.putOnNewTask(scope, config, row, nowMs, bounds.perUser);
    return this.db.transaction().execute(async (trx) => {
      if (postgres)
        await sql`select pg_advisory_xact_lock(hashtextextended(${`push-configs:${scope.tenant}:${scope.owner}`}, 0))`.execute(
          trx,
        );
      if (!newTask) {
        const task = await trx
          .selectFrom('tasks')
          .select('id')
          .where('id', '=', config.taskId)
          .where('tenant', '=', scope.tenant)
          .where('owner', '=', scope.owner)
          .$if(postgres, (q) => q.forUpdate())
          .executeTakeFirst();
        if (!task) return 'no_task';
      }
      const present = await trx
        .selectFrom('push_configs')
        .select('config_id')
        .where('task_id', '=', config.taskId)
        .where('config_id', '=', config.id)
        .executeTakeFirst();
      if (present) {
        await trx
          .updateTable('push_configs')
          .set(row)
          .where('task_id', '=', config.taskId)
          .where('config_id', '=', config.id)
          .execute();
        return 'stored';
      }
      const counts = await trx
        .selectFrom('push_configs')
        .select((eb) => [
          eb.fn.countAll().as('user'),
          eb.fn.sum(eb.case().when('task_id', '=', config.taskId).then(1).else(0).end()).as('task'),
        ])
        .where('tenant', '=', scope.tenant)
        .where('owner', '=', scope.owner)
        .executeTakeFirstOrThrow();
      if (Number(counts.task ?? 0) >= bounds.perTask) return 'task_full';
      if (Number(counts.user) >= bounds.perUser) return 'user_full';
      // Before the row: a write of the task from now on writes the outbox's statement.
      this.withConfigs?.add(config.taskId);
      await trx
        .insertInto('push_configs')
        .values({ task_id: config.taskId, config_id: config.id, ...scope, ...row, created_ms: nowMs })
        .execute();
      return 'stored';
    });
  }

  /**
   * Alone (SQLite: one writer, so one statement is atomic), the config of a task about to be
   * made, which has none yet: one statement, on a turn's path, that counts the user's configs and
   * inserts.
   */
  private async putOnNewTask(
    scope: TaskScope,
    config: StoredPushConfig,
    row: { url: string; token: string; auth_json: string | null },
    nowMs: number,
    perUser: number,
  ): Promise<PutOutcome> {
    this.withConfigs?.add(config.taskId);
    const inserted = await sql`insert into push_configs
      (task_id, config_id, tenant, owner, url, token, auth_json, created_ms)
      select ${config.taskId}, ${config.id}, ${scope.tenant}, ${scope.owner}, ${row.url}, ${row.token}, ${row.auth_json}, ${nowMs}
      where (select count(*) from push_configs where tenant = ${scope.tenant} and owner = ${scope.owner}) < ${perUser}`.execute(
      this.db,
    );
    return Number(inserted.numAffectedRows ?? 0) > 0 ? 'stored' : 'user_full';
  }

  async get(scope: TaskScope, taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    return (await this.configs(scope, taskId, { id, limit: 1 })).configs[0];
  }

  /**
   * A page of the task's configs in the order they were made, at most `limit`, from after
   * `after` (the `next` of the page before); `next` is set when more follow.
   */
  async list(
    scope: TaskScope,
    taskId: string,
    page: { limit: number; after?: ConfigCursor },
  ): Promise<{ configs: StoredPushConfig[]; next?: ConfigCursor }> {
    return this.configs(scope, taskId, page);
  }

  /** Deletes the config and the deliveries still pending for it (those failed stay, for `/status`); none is no error. */
  async delete(scope: TaskScope, taskId: string, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const gone = await trx
        .deleteFrom('push_configs')
        .where('task_id', '=', taskId)
        .where('config_id', '=', id)
        .where('tenant', '=', scope.tenant)
        .where('owner', '=', scope.owner)
        .executeTakeFirst();
      if (Number(gone.numDeletedRows) === 0) return;
      await trx
        .deleteFrom('push_deliveries')
        .where('task_id', '=', taskId)
        .where('config_id', '=', id)
        .where('state', '=', 'pending')
        .execute();
    });
  }

  private async configs(
    scope: TaskScope,
    taskId: string,
    page: { id?: string; limit: number; after?: ConfigCursor },
  ): Promise<{ configs: StoredPushConfig[]; next?: ConfigCursor }> {
    const { id, limit, after } = page;
    const rows = await this.db
      .selectFrom('push_configs')
      .select(['task_id', 'config_id', 'url', 'token', 'auth_json', 'created_ms'])
      .where('task_id', '=', taskId)
      .where('tenant', '=', scope.tenant)
      .where('owner', '=', scope.owner)
      .$if(id !== undefined, (q) => q.where('config_id', '=', id!))
      .$if(after !== undefined, (q) =>
        q.where((eb) =>
          eb.or([
            eb('created_ms', '>', after!.createdMs),
            eb.and([eb('created_ms', '=', after!.createdMs), eb('config_id', '>', after!.id)]),
          ]),
        ),
      )
      .orderBy('created_ms')
      .orderBy('config_id')
      .limit(limit + 1)
      .execute();
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    return {
      configs: rows.slice(0, limit).map(toConfig),
      ...(last ? { next: { createdMs: Number(last.created_ms), id: last.config_id } } : {}),
    };
  }
}
