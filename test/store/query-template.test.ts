import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { QueryTemplate } from '../../src/store/query-template.js';
import type { Database } from '../../src/store/index.js';
import { storeBackends, tempStore } from './helpers.js';

/** The query templates of the hot statements (`query-template.ts`), on each backend. */

const readTask = new QueryTemplate<Database, readonly [string, string], { id: string; version: number }>(
  2,
  (db, id, owner) =>
    db
      .selectFrom('tasks')
      .select(['id', 'version'])
      .where('id', '=', id)
      .where('owner', '=', owner)
      .where('version', '>=', 0 as never),
);

for (const backend of storeBackends) {
  describe(`QueryTemplate on ${backend.name}`, backend.needs, () => {
    it('runs what its twin runs: the same SQL, each value in its place, the fixed ones kept', async () => {
      const temp = await tempStore(backend);
      try {
        const { db } = temp.store;
        await db
          .insertInto('tasks')
          .values({
            id: 't1',
            context_id: 'c1',
            tenant: '',
            owner: 'alice',
            state: 1,
            status_json: null,
            status_timestamp: '',
            status_time_ms: null,
            metadata_json: '{}',
            created_at: '',
            updated_at: '',
            version: 3,
          })
          .execute();
        const compiled = readTask.compile(db, ['t1', 'alice']);
        const twin = db
          .selectFrom('tasks')
          .select(['id', 'version'])
          .where('id', '=', 't1')
          .where('owner', '=', 'alice')
          .where('version', '>=', 0)
          .compile();
        assert.equal(compiled.sql, twin.sql);
        assert.deepStrictEqual(compiled.parameters, twin.parameters);
        assert.deepStrictEqual((await readTask.run(db, ['t1', 'alice'])).rows, [{ id: 't1', version: 3 }]);
        assert.deepStrictEqual(
          (await readTask.run(db, ['t1', 'bob'])).rows,
          [],
          'the second run fills the places again',
        );
        await db
          .transaction()
          .execute(async (trx) =>
            assert.equal((await readTask.run(trx, ['t1', 'alice'])).rows.length, 1, 'in a transaction too'),
          );
      } finally {
        await temp.dispose();
      }
    });
  });
}

describe('QueryTemplate', () => {
  it('refuses a twin that leaves a value out, and a run with the wrong number of values', async () => {
    const temp = await tempStore();
    try {
      const { db } = temp.store;
      const unused = new QueryTemplate<Database, readonly [string, string]>(2, (db, id) =>
        db.selectFrom('tasks').select('id').where('id', '=', id),
      );
      assert.throws(() => unused.compile(db, ['a', 'b']), /uses 1 of its 2 values/);
      assert.throws(() => readTask.compile(db, ['a'] as never), /takes 2 values, not 1/);
    } finally {
      await temp.dispose();
    }
  });

  it('with checkTwins (set for the store tests), a template whose values would land elsewhere than its twin puts them fails', async () => {
    const temp = await tempStore();
    try {
      const { db } = temp.store;
      // The twin reads its values in another order than the slots were given: only checking catches it.
      let calls = 0;
      const swapped = new QueryTemplate<Database, readonly [string, string]>(2, (db, a, b) =>
        calls++ === 0
          ? db.selectFrom('tasks').select('id').where('id', '=', a).where('owner', '=', b)
          : db.selectFrom('tasks').select('id').where('id', '=', b).where('owner', '=', a),
      );
      assert.equal(QueryTemplate.checkTwins, true);
      assert.throws(() => swapped.compile(db, ['t1', 'alice']), /differs from its twin/);
    } finally {
      await temp.dispose();
    }
  });
});
