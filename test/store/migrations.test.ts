import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import { InCodeMigrationProvider, migrateToLatest, openSqliteDatabase } from '../../src/store/index.js';

/** Upgrading a database written before harness state was kept per user (migrations 0004, 0005). */
describe('migrations 0004 and 0005: harness state by user', () => {
  it('CMD-34, CMD-35: command replies become accepted claims of their task\'s owner, context choices go to the users who chose them', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'th-migrate-'));
    const db = openSqliteDatabase(join(folder, 'old.db')) as Kysely<any>;
    try {
      const { error } = await new Migrator({ db, provider: new InCodeMigrationProvider() }).migrateTo('0003_task_links');
      assert.equal(error, undefined);
      const task = (id: string, owner: string, contextId: string) => ({
        id, context_id: contextId, tenant: '', owner, state: 6, status_json: null, metadata_json: '{}', status_timestamp: '', status_time_ms: null, created_at: '', updated_at: '',
      });
      await db.insertInto('tasks').values([task('ta', 'alice', 'shared'), task('tb', 'bob', 'shared'), task('tc', 'carol', 'hers')]).execute();
      await db.insertInto('command_replies').values([
        { task_id: 'ta', message_id: 'm1', reply_json: '{"taskId":"ta"}' },
        { task_id: 'gone', message_id: 'm2', reply_json: '{}' }, // a reply whose task is not stored
      ]).execute();
      // Alice chose `large` in the shared context; bob's task there kept the default; carol chose `small`.
      await db.insertInto('task_settings').values([{ task_id: 'ta', model: 'p:large' }, { task_id: 'tc', model: 'p:small' }]).execute();
      await db.insertInto('context_settings').values([{ context_id: 'shared', model: 'p:large' }, { context_id: 'hers', model: 'p:small' }]).execute();

      await migrateToLatest(db);

      assert.deepEqual(await db.selectFrom('message_claims').selectAll().execute(), [
        { tenant: '', owner: 'alice', message_id: 'm1', digest: '', task_id: 'ta', reply_json: '{"taskId":"ta"}' },
      ]);
      assert.deepEqual(await db.selectFrom('context_models').selectAll().orderBy('owner').execute(), [
        { tenant: '', owner: 'alice', context_id: 'shared', model: 'p:large' },
        { tenant: '', owner: 'carol', context_id: 'hers', model: 'p:small' },
      ]);
      const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name in ('command_replies', 'context_settings')`.execute(db);
      assert.deepEqual(rows, [], 'the old tables are gone');
    } finally {
      await db.destroy();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
