import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { migrateToLatest, openSqliteDatabase, openStore } from '../../src/store/index.js';
import { makeFolder } from '../../src/make-folder.js';
import { openFailure } from '../../src/store/database.js';

/** The SQLite connection: its durability setting, its prepared-statement cache. About SQLite itself, so SQLite only. */
describe('openSqliteDatabase', () => {
  it('flushes every commit to the disk with durability "full", and only at checkpoints with "normal" (the default)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'th-db-'));
    try {
      // PRAGMA synchronous reads 1 for NORMAL, 2 for FULL; the journal is WAL either way.
      for (const [durability, expected] of [
        [undefined, 1],
        ['normal', 1],
        ['full', 2],
      ] as const) {
        const db = openSqliteDatabase(join(folder, `${durability ?? 'default'}.db`), durability);
        try {
          const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(db);
          assert.equal(rows[0]!.synchronous, expected, `durability ${durability}`);
          const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
          assert.equal(journal.rows[0]!.journal_mode, 'wal');
        } finally {
          await db.destroy();
        }
      }
      assert.throws(
        () => openSqliteDatabase(join(folder, 'x.db'), 'paranoid' as 'full'),
        /Unknown durability "paranoid"/,
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('is opened by the store with the durability it is given', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'th-db-'));
    try {
      for (const [durability, expected] of [
        [undefined, 1],
        ['full', 2],
      ] as const) {
        const store = await openStore({ dataDir: folder, durability });
        try {
          const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
          assert.equal(rows[0]!.synchronous, expected);
        } finally {
          await store.close();
        }
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('answers correctly when statements are reused and when more SQL texts than the cache holds are run', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'th-db-'));
    const db = openSqliteDatabase(join(folder, 'test.db'));
    try {
      await migrateToLatest(db);
      // 600 distinct texts go well past the cache (256), so early ones are evicted and prepared again.
      for (let round = 0; round < 2; round += 1) {
        for (let i = 0; i < 600; i += 1) {
          const { rows } = await sql<{ n: number }>`select ${sql.lit(i)} + ${round} as n`.execute(db);
          assert.equal(rows[0]!.n, i + round);
        }
      }
      // One text run many times with different parameters: the cached statement binds anew each time.
      for (let i = 0; i < 50; i += 1) {
        await db
          .insertInto('task_settings')
          .values({ task_id: `t${i}`, model: `m${i}` })
          .execute();
      }
      const models = await db.selectFrom('task_settings').select(['task_id', 'model']).orderBy('task_id').execute();
      assert.equal(models.length, 50);
      assert.deepEqual(
        models.find((row) => row.task_id === 't7'),
        { task_id: 't7', model: 'm7' },
      );
    } finally {
      await db.destroy();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

/** Issue 22, item 2: a data folder is made one level at a time, so a place where none can be made fails at once. */
describe('openFailure: why the database file could not be opened', () => {
  it('a driver built for another Node.js (after switching from 20 to 24) says to rebuild it, not to move the data', () => {
    const loading = Object.assign(
      new Error(
        "The module '/srv/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 115.",
      ),
      { code: 'ERR_DLOPEN_FAILED' },
    );
    const error = openFailure('/data/tiny-harness.db', loading);
    assert.equal(error.code, 'store_failed');
    assert.match(error.message, /^The SQLite driver \(better-sqlite3\) was built for another version of Node\.js/);
    assert.ok(error.message.includes(`(${process.version})`), 'names the Node.js running');
    assert.match(error.message, /run `npm rebuild better-sqlite3` with this Node\.js/);
    assert.doesNotMatch(error.message, /\/srv|\/data/, 'names no path');
  });

  it('a file that is not a database is named, to be moved away', () => {
    const error = openFailure(
      '/data/tiny-harness.db',
      Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' }),
    );
    assert.equal(error.code, 'data_unusable');
    assert.match(error.message, /^Cannot open the database file \/data\/tiny-harness\.db: it is not a SQLite database/);
  });
});

describe('makeFolder', () => {
  it('makes every missing level, and accepts a folder that exists', () => {
    const root = mkdtempSync(join(tmpdir(), 'th-folder-'));
    try {
      const deep = join(root, 'a', 'b', 'c');
      makeFolder(deep);
      assert.ok(statSync(deep).isDirectory());
      makeFolder(deep);
      makeFolder(root);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses a file where a folder or one of its parents should be', () => {
    const root = mkdtempSync(join(tmpdir(), 'th-folder-'));
    try {
      const file = join(root, 'a-file');
      writeFileSync(file, 'not a folder');
      assert.throws(() => makeFolder(file), { code: 'ENOTDIR' });
      assert.throws(() => makeFolder(join(file, 'data', 'deeper')), { code: 'ENOTDIR' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it(
    'fails where mkdir answers ENOENT under an existing parent (procfs), instead of retrying forever',
    {
      skip: process.platform !== 'linux' && 'procfs is Linux only',
    },
    () => {
      assert.throws(() => makeFolder('/proc/nonexistent/x'), { code: 'ENOENT' });
      assert.throws(() => openSqliteDatabase('/proc/nonexistent/x/tasks.db'), {
        code: 'data_unusable',
        message: 'Cannot use the data folder /proc/nonexistent/x: no folder can be created there.',
      });
    },
  );
});
