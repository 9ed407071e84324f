import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { HarnessError } from '../../src/errors.js';
import { describeDatabaseUrl, isPostgresUrl, openStore, type Database } from '../../src/store/index.js';
import { openPostgresDatabase } from '../../src/store/postgres-database.js';
import { POSTGRESQL, tempStore } from './helpers.js';
import { tempSchema } from '../support/postgres.js';

/** Opening the store on PostgreSQL: what is accepted, what is said when it fails (never the password), how values read. */

describe('the PostgreSQL database URL', () => {
  it('is shown as postgres://host:port/db at most: no user, password, query or socket folder', () => {
    assert.equal(
      describeDatabaseUrl('postgres://app:s3cret@db.example.com:5433/harness?sslmode=require'),
      'postgres://db.example.com:5433/harness',
    );
    assert.equal(describeDatabaseUrl('postgresql://app@127.0.0.1/test'), 'postgres://127.0.0.1/test');
    assert.equal(describeDatabaseUrl('postgres://%2Fvar%2Frun%2Fpostgresql/test'), 'postgres://(socket)/test');
    assert.equal(describeDatabaseUrl('postgres:///test'), 'postgres://localhost/test');
    assert.doesNotMatch(describeDatabaseUrl('postgres://a:b@[::1'), /b@/);
    assert.ok(isPostgresUrl('postgres://h/db') && isPostgresUrl('POSTGRESQL://h/db'));
    assert.ok(!isPostgresUrl('mysql://h/db') && !isPostgresUrl('/var/data'));
  });

  it('is refused with store_failed, without echoing it, when it is not a PostgreSQL URL', async () => {
    for (const url of ['mysql://root:s3cret@127.0.0.1/db', 's3cret', '']) {
      await assert.rejects(openStore({ databaseUrl: url }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'store_failed');
        assert.match(error.message, /must be a PostgreSQL URL such as postgres:\/\/user@host:5432\/database/);
        assert.doesNotMatch(error.message, /s3cret/);
        return true;
      });
    }
  });

  it('names the database, not the URL, when the server cannot be reached at start-up', async () => {
    // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
    await assert.rejects(
      openStore({ databaseUrl: 'postgres://app:s3cret@127.0.0.1:1/harness' }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'store_failed');
        assert.equal(
          error.message,
          'Cannot use the PostgreSQL database postgres://127.0.0.1:1/harness: the connection was refused (is the server running, on that port?).',
        );
        return true;
      },
    );
  });
  it('gives up on a server that accepts the connection but never answers, within the connect timeout', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      await assert.rejects(
        openPostgresDatabase(`postgres://app:s3cret@127.0.0.1:${port}/harness`, { connectTimeoutMs: 200 }),
        {
          code: 'store_failed',
          message: `Cannot use the PostgreSQL database postgres://127.0.0.1:${port}/harness: the server did not answer in time.`,
        },
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('the PostgreSQL database', POSTGRESQL.needs, () => {
  it('reads bigint columns and counts as numbers, as SQLite does', async () => {
    const temp = await tempStore(POSTGRESQL);
    try {
      const { rows } = await sql<{
        big: unknown;
        counted: unknown;
      }>`select 6000000000::bigint as big, count(*) as counted from tasks`.execute(temp.store.db);
      assert.deepEqual(rows, [{ big: 6_000_000_000, counted: 0 }]);
      assert.equal(temp.store.shared, true);
    } finally {
      await temp.dispose();
    }
  });

  it("bounds how long a transaction may wait idle on the harness's connections (idle_in_transaction_session_timeout): 10 s by default, the lease given", async () => {
    const temp = await tempStore(POSTGRESQL, { idleInTransactionMs: 2500 });
    const byDefault = await openPostgresDatabase(temp.where.databaseUrl!, { maxConnections: 1 });
    try {
      const show = async (db: Kysely<Database>) =>
        (
          await sql<{ value: string }>`select current_setting('idle_in_transaction_session_timeout') as value`.execute(
            db,
          )
        ).rows[0]?.value;
      assert.equal(await show(temp.store.db), '2500ms');
      assert.equal(await show(byDefault), '10s');
    } finally {
      await byDefault.destroy();
      await temp.dispose();
    }
  });

  it('lets a query wait for a free connection as long as it takes: the connect timeout bounds connecting only', async () => {
    const temp = await tempStore(POSTGRESQL);
    // A connect timeout short enough to outlast a few times, long enough to connect on a busy machine.
    const db = await openPostgresDatabase(temp.where.databaseUrl!, { maxConnections: 1, connectTimeoutMs: 500 });
    try {
      // One connection, held by a transaction far longer than the connect timeout; the next query waits for it.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const holding = new Promise<void>((resolve) => (started = resolve));
      const transaction = db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        started();
        await held;
      });
      await holding;
      const waiting = sql<{ n: number }>`select 2 as n`.execute(db);
      await new Promise((resolve) => setTimeout(resolve, 2000)); // four connect timeouts: the wait must outlast them
      release();
      await transaction;
      assert.deepEqual((await waiting).rows, [{ n: 2 }]);
    } finally {
      await db.destroy();
      await temp.dispose();
    }
  });

  it('names a database that does not exist, and the schema of the search path when it is missing', async () => {
    const base = new URL(process.env.TINY_HARNESS_TEST_DATABASE_URL!);
    const missing = new URL(base);
    missing.pathname = '/th_no_such_database';
    await assert.rejects(
      openPostgresDatabase(missing.toString()),
      /Cannot use the PostgreSQL database postgres:\/\/.*\/th_no_such_database: the database does not exist\./,
    );
    const noSchema = new URL(base);
    noSchema.searchParams.set('options', '-c search_path=th_no_such_schema');
    await assert.rejects(openStore({ databaseUrl: noSchema.toString() }), {
      code: 'store_failed',
      message: /search path names no schema that exists/,
    });
  });
});

describe('migrating beside other schemas', POSTGRESQL.needs, () => {
  it("introspects only the search path's schema, so another schema dropped meanwhile cannot fail a start", async () => {
    const temp = await tempStore(POSTGRESQL);
    const other = await tempSchema();
    try {
      await sql.raw(`create table ${other.schema}.elsewhere (id int)`).execute(temp.store.db);
      const tables = await temp.store.db.introspection.getTables();
      assert.ok(tables.some((table) => table.name === 'tasks'));
      assert.deepEqual(
        tables.filter((table) => table.schema !== tables[0]!.schema || table.name === 'elsewhere'),
        [],
        'no table of another schema',
      );
    } finally {
      await other.drop();
      await temp.dispose();
    }
  });
});

describe('a PostgreSQL connection ended while in use (issue 22)', POSTGRESQL.needs, () => {
  /** The store's database on one connection, and another to end it from. */
  async function openTwo(t: { after(fn: () => Promise<void>): void }) {
    const temp = await tempStore(POSTGRESQL);
    const db = await openPostgresDatabase(temp.where.databaseUrl!, { maxConnections: 1, instanceId: 'issue-22' });
    const admin = await openPostgresDatabase(temp.where.databaseUrl!, { maxConnections: 1 });
    t.after(async () => {
      await db.destroy();
      await admin.destroy();
      await temp.dispose();
    });
    return { db, admin };
  }

  const backendPid = async (db: Kysely<any>) =>
    (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;

  /** Ends the connection whose backend is `pid`, as a database restart or an administrator would; resolves once it is gone. */
  async function endBackend(admin: Kysely<any>, pid: number): Promise<void> {
    await sql`select pg_terminate_backend(${pid})`.execute(admin);
    // Nothing to await on the server's side: polled until the backend has left.
    for (;;) {
      const { rows } = await sql`select 1 from pg_stat_activity where pid = ${pid}`.execute(admin);
      if (rows.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  const connectionFailed = (error: unknown) => {
    assert.ok(error instanceof HarnessError, String(error));
    assert.equal(error.code, 'store_failed');
    assert.match(error.message, /^The PostgreSQL connection failed before the statement was answered: /);
    return true;
  };

  it('inside a transaction: the next statement fails with store_failed saying so, the process lives, and the pool opens another connection', async (t) => {
    const { db, admin } = await openTwo(t);
    const { rows } = await sql<{ name: string }>`select application_name as name from pg_stat_activity
      where pid = pg_backend_pid()`.execute(db);
    assert.deepEqual(rows, [{ name: 'tiny-harness issue-22' }], 'the connection names its instance');
    const first = await backendPid(db);
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await endBackend(admin, await backendPid(trx));
        await sql`select 1`.execute(trx);
      }),
      connectionFailed,
    );
    assert.notEqual(await backendPid(db), first, 'a new connection');
  });

  it('during a write: it fails with store_failed (it may have been committed, so it is not sent again), and the statement waiting for the connection gets a new one', async (t) => {
    const { db, admin } = await openTwo(t);
    const first = await backendPid(db);
    const sleeping = assert.rejects(
      sql`update tasks set version = version from (select pg_sleep(60)) as slept`.execute(db),
      connectionFailed,
    );
    const waiting = backendPid(db).then(
      (pid) => ({ pid }),
      (error: unknown) => ({ error }),
    );
    await waitForStatement(admin, first, /pg_sleep/);
    await endBackend(admin, first);
    await sleeping;
    const next = await waiting;
    assert.ok('pid' in next && next.pid !== first, `not the ended connection: ${JSON.stringify(next)}`);
  });

  it("during a read (issue 33): it is sent again on a new connection and answered; a task's links read so, as a turn reads them", async (t) => {
    const temp = await tempStore(POSTGRESQL, { instanceId: 'issue-33' });
    const admin = await openPostgresDatabase(temp.where.databaseUrl!, { maxConnections: 1 });
    // Holds the links' table, so that the read waits at the server until it is let go.
    const locker = new pg.Client({ connectionString: temp.where.databaseUrl! });
    t.after(async () => {
      await locker.end().catch(() => undefined);
      await admin.destroy();
      await temp.dispose();
    });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table task_links in access exclusive mode');
    const read = temp.store.state.getLinks('some-task');
    const first = await waitForStatement(admin, undefined, /task_links/, 'tiny-harness issue-33');
    await endBackend(admin, first);
    // Sent again, it waits for the lock on a new connection: let go, it is answered.
    const again = await waitForStatement(admin, undefined, /task_links/, 'tiny-harness issue-33');
    assert.notEqual(again, first, 'sent again on a new connection');
    await locker.query('commit');
    assert.deepEqual(await read, { parent: undefined, children: [] });
  });
});

/**
 * The backend running a statement whose text matches `pattern`, once the server shows it
 * running: `pid`'s, or any of the connections named `applicationName`. Polled: the server tells
 * no one when a statement starts.
 */
async function waitForStatement(
  admin: Kysely<any>,
  pid: number | undefined,
  pattern: RegExp,
  applicationName?: string,
): Promise<number> {
  for (;;) {
    const { rows } = await sql<{ pid: number; query: string }>`select pid, query from pg_stat_activity
      where state = 'active' and (pid = ${pid ?? -1} or application_name = ${applicationName ?? ''})`.execute(admin);
    const found = rows.find((row) => pattern.test(row.query));
    if (found) return found.pid;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
