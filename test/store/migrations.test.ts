import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { createMigrator, migrateToLatest, migrations, SqlTaskStore } from '../../src/store/index.js';
import { openPostgresDatabase } from '../../src/store/postgres-database.js';
import { TaskState } from '@a2a-js/sdk';
import { callContext, emptyDatabase, newTask, POSTGRESQL, statusUpdate, storeBackends, taskEvent } from './helpers.js';
import { tempSchema } from '../support/postgres.js';

/** Upgrading databases written by earlier versions, on each backend; instances migrating together (PostgreSQL). */

const task = (id: string, owner: string, contextId: string) => ({
  id,
  context_id: contextId,
  tenant: '',
  owner,
  state: 6,
  status_json: null,
  metadata_json: '{}',
  status_timestamp: '',
  status_time_ms: null,
  created_at: '',
  updated_at: '',
});

for (const backend of storeBackends) {
  describe(`migrations on ${backend.name}`, backend.needs, () => {
    it("CMD-34, CMD-35 (0004, 0005): command replies become accepted claims of their task's owner, context choices go to the users who chose them", async () => {
      const { db: typed, dispose } = await emptyDatabase(backend);
      const db = typed as Kysely<any>;
      try {
        const { error } = await (await createMigrator(db)).migrateTo('0003_task_links');
        assert.equal(error, undefined);
        await db
          .insertInto('tasks')
          .values([task('ta', 'alice', 'shared'), task('tb', 'bob', 'shared'), task('tc', 'carol', 'hers')])
          .execute();
        await db
          .insertInto('command_replies')
          .values([
            { task_id: 'ta', message_id: 'm1', reply_json: '{"taskId":"ta"}' },
            { task_id: 'gone', message_id: 'm2', reply_json: '{}' }, // a reply whose task is not stored
          ])
          .execute();
        // Alice chose `large` in the shared context; bob's task there kept the default; carol chose `small`.
        await db
          .insertInto('task_settings')
          .values([
            { task_id: 'ta', model: 'p:large' },
            { task_id: 'tc', model: 'p:small' },
          ])
          .execute();
        await db
          .insertInto('context_settings')
          .values([
            { context_id: 'shared', model: 'p:large' },
            { context_id: 'hers', model: 'p:small' },
          ])
          .execute();

        assert.equal((await (await createMigrator(db)).migrateTo('0009_task_event_seq')).error, undefined);

        assert.deepEqual(await db.selectFrom('message_claims').selectAll().execute(), [
          {
            tenant: '',
            owner: 'alice',
            message_id: 'm1',
            digest: '',
            task_id: 'ta',
            reply_json: '{"taskId":"ta"}',
            claimant: null,
          },
        ]);
        assert.deepEqual(await db.selectFrom('context_models').selectAll().orderBy('owner').execute(), [
          { tenant: '', owner: 'alice', context_id: 'shared', model: 'p:large' },
          { tenant: '', owner: 'carol', context_id: 'hers', model: 'p:small' },
        ]);
        await assert.rejects(db.selectFrom('command_replies').selectAll().execute(), 'the old tables are gone');
        await assert.rejects(db.selectFrom('context_settings').selectAll().execute());
      } finally {
        await dispose();
      }
    });

    it('CMD-34 (0010): claims are keyed by content too and dated as of the upgrade; those of unknown content are dropped', async () => {
      const { db: typed, dispose } = await emptyDatabase(backend);
      const db = typed as Kysely<any>;
      try {
        assert.equal((await (await createMigrator(db)).migrateTo('0009_task_event_seq')).error, undefined);
        const claim = { tenant: '', owner: 'alice', task_id: 't1', reply_json: null, claimant: 'i1' };
        await db
          .insertInto('message_claims')
          .values([
            { ...claim, message_id: 'm1', digest: 'd1' },
            { ...claim, message_id: 'old', digest: '' },
          ])
          .execute();
        const before = Date.now();
        await migrateToLatest(db);
        const rows = await db.selectFrom('message_claims').selectAll().execute();
        assert.deepEqual(
          rows.map(({ created_ms: _created, ...row }) => row),
          [{ ...claim, message_id: 'm1', digest: 'd1' }],
        );
        assert.ok(Number(rows[0]!.created_ms) >= before, 'dated as of the upgrade');
        await db
          .insertInto('message_claims')
          .values({ ...claim, message_id: 'm1', digest: 'd2', created_ms: before })
          .execute();
        assert.equal((await db.selectFrom('message_claims').selectAll().execute()).length, 2, 'one id, two messages');
        await assert.rejects(
          db
            .insertInto('message_claims')
            .values({ ...claim, message_id: 'm1', digest: 'd2', created_ms: before })
            .execute(),
          'but one claim per message',
        );
      } finally {
        await dispose();
      }
    });

    it('CMD-34 (0011): one id may carry several messages of a task; stored messages are kept, one per seq', async () => {
      const { db: typed, dispose } = await emptyDatabase(backend);
      const db = typed as Kysely<any>;
      try {
        assert.equal((await (await createMigrator(db)).migrateTo('0010_claims_by_content')).error, undefined);
        await db
          .insertInto('tasks')
          .values(task('t1', 'alice', 'c'))
          .execute();
        const row = (seq: number, id: string) => ({ task_id: 't1', seq, message_id: id, message_json: `{"n":${seq}}` });
        await db
          .insertInto('task_messages')
          .values([row(0, 'm1'), row(1, 'm2')])
          .execute();
        await assert.rejects(db.insertInto('task_messages').values(row(2, 'm1')).execute(), 'one id per task before');
        await migrateToLatest(db);
        await db.insertInto('task_messages').values(row(2, 'm1')).execute();
        assert.deepEqual(await db.selectFrom('task_messages').selectAll().orderBy('seq').execute(), [
          row(0, 'm1'),
          row(1, 'm2'),
          row(2, 'm1'),
        ]);
        await assert.rejects(db.insertInto('task_messages').values(row(2, 'm3')).execute(), 'one message per seq');
      } finally {
        await dispose();
      }
    });

    it('issue 23 (0013): tasks stored before start at generation 1 with an empty log, and their next event is logged as 2', async () => {
      const { db, dispose } = await emptyDatabase(backend);
      try {
        assert.equal((await (await createMigrator(db)).migrateTo('0012_turn_fences')).error, undefined);
        await (db as Kysely<any>)
          .insertInto('tasks')
          .values({ ...task('old', 'alice', 'c'), event_seq: 7 })
          .execute();
        await migrateToLatest(db);
        assert.deepEqual(
          (await db.selectFrom('tasks').select(['id', 'generation']).execute()).map((row) => [
            row.id,
            Number(row.generation),
          ]),
          [['old', 1]],
        );
        assert.deepEqual(await db.selectFrom('task_events').selectAll().execute(), []);

        const store = new SqlTaskStore(db, { shared: backend.shared });
        const alice = callContext('alice');
        assert.equal((await store.read('old', alice))?.generation, 1);
        const { logged } = await store.append('old', alice, [
          statusUpdate({ id: 'old', contextId: 'c' }, TaskState.TASK_STATE_COMPLETED),
        ]);
        assert.deepEqual(
          logged.map((l) => l.generation),
          [2],
        );
        assert.equal((await store.read('old', alice))?.generation, 2);
        assert.deepEqual(
          (await db.selectFrom('task_events').select('generation').execute()).map((row) => Number(row.generation)),
          [2],
        );
      } finally {
        await dispose();
      }
    });

    it('0006: tasks stored before have version 0, and every save of a task adds one', async () => {
      const { db, dispose } = await emptyDatabase(backend);
      try {
        assert.equal((await (await createMigrator(db)).migrateTo('0005_message_claims')).error, undefined);
        await (db as Kysely<any>)
          .insertInto('tasks')
          .values(task('old', 'alice', 'c'))
          .execute();
        await migrateToLatest(db);
        assert.deepEqual(await db.selectFrom('tasks').select(['id', 'version']).execute(), [{ id: 'old', version: 0 }]);

        const store = new SqlTaskStore(db, { shared: backend.shared });
        const alice = callContext('alice');
        const fresh = newTask();
        await store.create(fresh, alice);
        for (let i = 0; i < 3; i++)
          await store.append(fresh.id, alice, [taskEvent({ ...fresh, history: [], metadata: { round: i } })]);
        const version = await db
          .selectFrom('tasks')
          .select('version')
          .where('id', '=', fresh.id)
          .executeTakeFirstOrThrow();
        assert.equal(version.version, 3);
        assert.equal(await store.modify(fresh.id, alice, () => undefined), undefined);
        await store.append(fresh.id, alice, [statusUpdate(fresh, TaskState.TASK_STATE_COMPLETED)]);
        // A status for an ended task in another state changes nothing and is not logged.
        assert.deepEqual(
          (await store.append(fresh.id, alice, [statusUpdate(fresh, TaskState.TASK_STATE_WORKING)])).logged,
          [],
        );
        assert.equal(
          (await db.selectFrom('tasks').select('version').where('id', '=', fresh.id).executeTakeFirstOrThrow()).version,
          4,
          'a write that changes nothing writes nothing',
        );
      } finally {
        await dispose();
      }
    });
  });
}

describe('migrations on PostgreSQL, several instances', POSTGRESQL.needs, () => {
  it('migrates one new schema once when two instances start at the same moment (kysely holds an advisory lock)', async () => {
    for (let round = 0; round < 3; round++) {
      const schema = await tempSchema();
      const [a, b] = await Promise.all([openPostgresDatabase(schema.url), openPostgresDatabase(schema.url)]);
      try {
        await Promise.all([migrateToLatest(a), migrateToLatest(b)]);
        const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(a);
        assert.deepEqual(
          applied.rows.map((row) => row.name),
          Object.keys(migrations).sort(),
        );
        assert.deepEqual(await b.selectFrom('tasks').select('id').execute(), []);
      } finally {
        await Promise.all([a.destroy(), b.destroy()]);
        await schema.drop();
      }
    }
  });

  it('keeps its migration bookkeeping in its own schema, beside another migrated schema of the same database', async () => {
    const [first, second] = [await tempSchema(), await tempSchema()];
    const a = await openPostgresDatabase(first.url);
    const b = await openPostgresDatabase(second.url);
    try {
      await migrateToLatest(a);
      await migrateToLatest(b);
      for (const [db, schema] of [
        [a, first],
        [b, second],
      ] as const) {
        const { rows } = await sql<{
          table_name: string;
        }>`select table_name from information_schema.tables where table_schema = ${schema.schema} and table_name like 'kysely%' order by table_name`.execute(
          db,
        );
        assert.deepEqual(
          rows.map((row) => row.table_name),
          ['kysely_migration', 'kysely_migration_lock'],
        );
      }
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
      await Promise.all([first.drop(), second.drop()]);
    }
  });

  it('0006: tasks are listed and paged by their ids and timestamps in binary order, as on SQLite and in the SDK', async () => {
    const { db, dispose } = await emptyDatabase(POSTGRESQL);
    try {
      await migrateToLatest(db);
      const { rows } = await sql<{
        column_name: string;
        collation_name: string;
      }>`select column_name, collation_name from information_schema.columns
        where table_schema = current_schema() and table_name = 'tasks' and column_name in ('id', 'status_timestamp') order by column_name`.execute(
        db,
      );
      assert.deepEqual(rows, [
        { column_name: 'id', collation_name: 'C' },
        { column_name: 'status_timestamp', collation_name: 'C' },
      ]);
    } finally {
      await dispose();
    }
  });
});
