import { CompiledQuery, PostgresAdapter, type Compilable, type Kysely } from 'kysely';

/** What a read needs of a database: any `Kysely`, whatever its tables. */
type Reader = Pick<Kysely<unknown>, 'executeQuery' | 'isTransaction' | 'getExecutor'>;

/**
 * Reads sent together reach PostgreSQL as one statement: every read passed to `readTogether`
 * before the event loop next checks for I/O (the reads of one step of a request, started with
 * `Promise.all`, and those of other requests served in the same turn of the loop) goes out as
 * one `select`, each read a scalar subquery answering its rows as JSON. One round trip instead
 * of one per read (issue 36: `/status` read the task and what it reports in seven). A write on
 * its own may go with them (`writeTogether`: the claim of a command's message, with its task).
 *
 * Only for reads that are not part of a transaction, and whose columns are text, integers,
 * booleans or counts: those read back from JSON exactly as pg reads them (bigints as numbers,
 * as `postgres-database.ts` has pg read them). A date or a `numeric` would not; such a read
 * keeps to `execute()`. On SQLite, or in a transaction, a read runs at once, on its own.
 *
 * The statement is a read on its own, so a connection failure sends it again as any such read
 * (`postgres-database.ts`). When the server refuses it (one read's error), each read is sent
 * again alone, so that only the read at fault fails.
 */
export function readTogether<Row>(db: Reader, query: Compilable<Row> | CompiledQuery<Row>): Promise<Row[]> {
  const compiled = 'compile' in query ? query.compile() : query;
  if (db.isTransaction || !isPostgres(db)) return db.executeQuery(compiled).then((result) => result.rows);
  let batches = routes.get(db);
  if (!batches) routes.set(db, (batches = { batches: new ReadBatches(db), here: false }));
  return batches.batches.add(compiled, batches.here, false);
}

/**
 * A write on its own (one statement, outside a transaction), sent with the reads sent together
 * with it: the statement is `with w as (<write>) select <its returned rows>, <the reads>`. The
 * reads see the database as it was before the write. One write per statement: another sent
 * meanwhile goes on its own. Used for the claim of a message, sent while its task is read.
 */
export function writeTogether<Row>(db: Reader, query: CompiledQuery<Row>): Promise<Row[]> {
  if (db.isTransaction || !isPostgres(db)) return db.executeQuery(query).then((result) => result.rows);
  let batches = routes.get(db);
  if (!batches) routes.set(db, (batches = { batches: new ReadBatches(db), here: false }));
  if (batches.here) throw new Error('A write joins the statements of its own database only.');
  return batches.batches.add(query, false, true);
}

/**
 * Reads of `other` (the coordination's pool) join `db`'s statements (the store's). A statement
 * holding one of them is sent on `other`: its connections never wait for `db`'s, which a read
 * asked from inside one of `db`'s transactions must not (the coordination's `turnHeld`).
 */
export function shareReads(db: Reader, other: Reader): void {
  if (!isPostgres(db) || !isPostgres(other)) return;
  let batches = routes.get(db);
  if (!batches) routes.set(db, (batches = { batches: new ReadBatches(db), here: false }));
  batches.batches.other = other;
  routes.set(other, { batches: batches.batches, here: true });
}

function isPostgres(db: Reader): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Per database: whose statements its reads join, and whether they must be sent on the other database. */
const routes = new WeakMap<object, { batches: ReadBatches; here: boolean }>();

/** The most reads one statement carries. */
const MOST_READS = 64;

interface Pending {
  query: CompiledQuery;
  /** A write (`writeTogether`): never sent again after a connection failure, as it may have been done. */
  write: boolean;
  /** Must be sent on `ReadBatches.other`. */
  onOther: boolean;
  resolve: (rows: never[]) => void;
  reject: (error: unknown) => void;
}

class ReadBatches {
  /** The database whose reads join these statements too (`shareReads`). */
  other?: Reader;
  private pending: Pending[] = [];

  constructor(private readonly db: Reader) {}

  add<Row>(query: CompiledQuery<Row>, onOther: boolean, write: boolean): Promise<Row[]> {
    return new Promise<Row[]>((resolve, reject) => {
      const pending = { query, onOther, write, resolve: resolve as Pending['resolve'], reject };
      if (write && this.pending.some((other) => other.write)) return alone(this.db, pending);
      if (this.pending.length === 0) setImmediate(() => this.send());
      this.pending.push(pending);
      // Under a flood, statements of a bounded size: well within PostgreSQL's 65,535 parameters.
      if (this.pending.length >= MOST_READS) this.send();
    });
  }

  private send(): void {
    const all = this.pending;
    if (all.length === 0) return;
    this.pending = [];
    const onOther = all.filter((read) => read.onOther);
    if (onOther.length === 0) return sendTogether(this.db, all);
    // A write goes on this database, whose commits are durable: the other's reads apart.
    if (all.some((read) => read.write)) {
      sendTogether(
        this.db,
        all.filter((read) => !read.onOther),
      );
      return sendTogether(this.other!, onOther);
    }
    sendTogether(this.other!, all);
  }
}

function sendTogether(db: Reader, sent: Pending[]): void {
  if (sent.length === 1) return alone(db, sent[0]!);
  // The write first: its rows are the `with`'s.
  const ordered = [...sent.filter((one) => one.write), ...sent.filter((one) => !one.write)];
  db.executeQuery<Record<string, never[]>>(
    together(
      ordered.map((one) => one.query),
      ordered[0]!.write,
    ),
  ).then(
    ({ rows: [row] }) => ordered.forEach((one, i) => one.resolve(row![`r${i}`]!)),
    (error: unknown) => {
      // The server's refusal of one undid the whole statement: each again alone, only the faulty one fails.
      if (isServerRefusal(error)) return ordered.forEach((one) => alone(db, one));
      // A read alone is sent again after a connection failure (`postgres-database.ts`); a
      // statement that writes is not, so its reads are, each alone, and the write fails.
      if (ordered[0]!.write) {
        ordered[0]!.reject(error);
        return ordered.slice(1).forEach((one) => alone(db, one));
      }
      ordered.forEach((one) => one.reject(error));
    },
  );
}

function alone(db: Reader, read: Pending): void {
  db.executeQuery<never>(read.query).then((result) => read.resolve(result.rows as never[]), read.reject);
}

/** An error the server answered with: a SQLSTATE of a class other than the connection's (08) or a shutdown's (57P). */
function isServerRefusal(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown }; code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57P0)/.test(code);
}

/**
 * One `select` of `queries`, the rows of the i-th as a JSON array in the column `r<i>`; with
 * `write`, the first is a write, run as the statement's `with`.
 */
export function together(queries: readonly CompiledQuery[], write = false): CompiledQuery {
  const parameters: unknown[] = [];
  const sqls = queries.map((query) => {
    const offset = parameters.length;
    parameters.push(...query.parameters);
    return renumbered(query.sql, offset);
  });
  const columns = sqls.map((sql, i) =>
    write && i === 0
      ? `(select coalesce(json_agg(w), '[]'::json) from w) as r0`
      : `(select coalesce(json_agg(t), '[]'::json) from (${sql}) as t) as r${i}`,
  );
  return CompiledQuery.raw(`${write ? `with w as (${sqls[0]}) ` : ''}select ${columns.join(', ')}`, parameters);
}

/**
 * `sql` with each parameter `$n` made `$(n + offset)`. kysely writes every value as a parameter
 * and quotes identifiers with `"`: a `$` inside quotes (an identifier, a literal) is left as it is.
 */
function renumbered(sql: string, offset: number): string {
  if (offset === 0) return sql;
  return sql.replace(/"(?:[^"]|"")*"|'(?:[^']|'')*'|\$(\d+)/g, (match, n: string | undefined) =>
    n === undefined ? match : `$${Number(n) + offset}`,
  );
}
