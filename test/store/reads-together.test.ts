import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { readTogether, shareReads, writeTogether } from '../../src/store/reads-together.js';
import { openPostgresDatabase } from '../../src/store/postgres-database.js';
import { recordingDatabase, storeBackends } from './helpers.js';

/** Reads sent together, one statement on PostgreSQL (`store/reads-together.ts`, issue 36). */

for (const backend of storeBackends) {
  describe(`readTogether on ${backend.name}`, backend.needs, () => {
    it('issue 36: reads started together answer what each alone answers, in order, with the same types', async () => {
      const { db, queries, dispose } = await recordingDatabase(backend);
      try {
        await db
          .insertInto('task_usage')
          .values([
            { task_id: 't1', model: 'b', input_tokens: 2 ** 40, output_tokens: 7, first_seq: 1 },
            { task_id: 't1', model: 'a', input_tokens: 1, output_tokens: 2, first_seq: 0 },
            { task_id: 't2', model: 'c', input_tokens: 3, output_tokens: 4, first_seq: 0 },
          ])
          .execute();
        await db.insertInto('task_links').values({ parent_id: 'p', child_id: `it's "$1"`, seq: 0 }).execute();
        const reads = [
          db.selectFrom('task_usage').selectAll().where('task_id', '=', 't1').orderBy('first_seq'),
          db
            .selectFrom('task_usage')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('model', '!=', 'z'),
          db.selectFrom('task_links').select(['parent_id', 'child_id']).where('child_id', '=', `it's "$1"`),
          db.selectFrom('task_usage').selectAll().where('task_id', '=', 'none'),
          sql<{ s: string; v: string }>`select '$1' as "$2", cast(${'v'} as text) as v`,
          db.selectNoFrom((eb) => [
            eb.selectFrom('task_settings').select('model').where('task_id', '=', 't1').as('task_model'),
            eb.exists(eb.selectFrom('task_usage').select('model').where('task_id', '=', 't2')).as('used'),
          ]),
        ] as const;
        const alone: unknown[] = [];
        for (const read of reads) alone.push((await db.executeQuery(read.compile(db))).rows);
        queries.length = 0;
        const together = await Promise.all(reads.map((read) => readTogether(db, read.compile(db))));
        assert.deepEqual(together, alone);
        assert.deepEqual(
          (together[0] as unknown as Array<{ model: string }>).map((row) => row.model),
          ['a', 'b'],
        );
        assert.deepEqual(together[1], [{ n: 3 }]);
        assert.deepEqual(together[4], [{ $2: '$1', v: 'v' }]);
        assert.equal(queries.length, backend.shared ? 1 : reads.length, queries.map((q) => q.sql).join('\n'));
      } finally {
        await dispose();
      }
    });

    it('issue 36: a read the server refuses fails alone; the others sent with it are answered', async () => {
      const { db, dispose } = await recordingDatabase(backend);
      try {
        const [good, bad, other] = await Promise.allSettled([
          readTogether(db, db.selectFrom('task_usage').selectAll()),
          readTogether(db, sql<{ x: number }>`select x from no_such_table`.compile(db)),
          readTogether(db, db.selectFrom('task_links').select('child_id')),
        ]);
        assert.deepEqual(good, { status: 'fulfilled', value: [] });
        assert.equal(bad.status, 'rejected');
        assert.deepEqual(other, { status: 'fulfilled', value: [] });
      } finally {
        await dispose();
      }
    });

    it('issue 36: a flood of reads goes in statements of at most 64 reads, each answered', async () => {
      const { db, queries, dispose } = await recordingDatabase(backend);
      try {
        const answers = await Promise.all(
          Array.from({ length: 100 }, (_, i) => readTogether(db, sql<{ i: number }>`select ${i} as i`.compile(db))),
        );
        assert.deepEqual(
          answers.map((rows) => Number(rows[0]!.i)),
          Array.from({ length: 100 }, (_, i) => i),
        );
        assert.equal(queries.length, backend.shared ? 2 : 100);
      } finally {
        await dispose();
      }
    });

    it('issue 36: a write sent with reads returns its rows, the reads see the tables as before it, one statement', async () => {
      const { db, queries, dispose } = await recordingDatabase(backend);
      try {
        const usage = { task_id: 't1', model: 'm', input_tokens: 1, output_tokens: 2, first_seq: 0 };
        queries.length = 0;
        const [written, read] = await Promise.all([
          writeTogether(db, db.insertInto('task_usage').values(usage).returning(['task_id', 'model']).compile()),
          readTogether(db, db.selectFrom('task_usage').select('model').compile()),
        ]);
        assert.deepEqual(written, [{ task_id: 't1', model: 'm' }]);
        assert.deepEqual(read, backend.shared ? [] : [{ model: 'm' }], 'on SQLite each runs at once, in order');
        assert.equal(queries.length, backend.shared ? 1 : 2);
        // Refused (the row is there): the write fails alone, the read is answered.
        const [again, after] = await Promise.allSettled([
          writeTogether(db, db.insertInto('task_usage').values(usage).returning('model').compile()),
          readTogether(db, db.selectFrom('task_usage').select('model').compile()),
        ]);
        assert.equal(again.status, 'rejected');
        assert.deepEqual(after, { status: 'fulfilled', value: [{ model: 'm' }] });
      } finally {
        await dispose();
      }
    });

    if (backend.shared)
      it("issue 36: a shared pool's reads join the store's, and the statement goes on that pool", async () => {
        const { db, url, dispose } = await recordingDatabase(backend);
        const sent: string[] = [];
        const other = await openPostgresDatabase(url!, {
          log: (event) => void (event.level === 'query' && sent.push(event.query.sql)),
        });
        sent.length = 0; // the check of the connection at opening
        try {
          shareReads(db, other);
          const [mine, theirs] = await Promise.all([
            readTogether(db, db.selectFrom('task_usage').select('model')),
            readTogether(other, sql<{ one: number }>`select 1 as one`.compile(other)),
          ]);
          assert.deepEqual([mine, theirs], [[], [{ one: 1 }]]);
          assert.equal(sent.length, 1);
          assert.match(sent[0]!, /task_usage.*select 1 as one/);
        } finally {
          await other.destroy();
          await dispose();
        }
      });
  });
}
