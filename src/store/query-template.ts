import { isDeepStrictEqual } from 'node:util';
import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';

/**
 * A query built with kysely once and run again with other values, for the few statements every
 * command and every event of a turn runs. Building and compiling a query takes kysely about as
 * long as SQLite takes to run one of these small statements (a tenth of a command's CPU, measured
 * in bench/RESULTS.md), and the SQL text is the same every time.
 *
 * The query is written once, as kysely code (its "twin"), with a slot in place of each value
 * that varies. The template compiles it for the dialect of the database it runs on, the first
 * time it runs there, and finds where each slot went among the compiled parameters; later runs
 * only fill those places. So the SQL always is what kysely writes, on SQLite and PostgreSQL
 * alike, and the order of parameters is read off the compiled query, never assumed.
 */

/** Stands for the value at `index` of the values given at each run. */
class Slot {
  constructor(readonly index: number) {}
}

/** A compiled query and, for each of its parameters, the slot that fills it or its fixed value. */
interface Compiled {
  sql: string;
  parameters: ReadonlyArray<Slot | unknown>;
}

export class QueryTemplate<DB, Values extends readonly unknown[], Row = unknown> {
  /**
   * When set (the store's tests set it), every run also builds its twin with the same values and
   * fails unless kysely writes the same SQL and parameters: the tests then check both ways.
   */
  static checkTwins = false;

  /** The compiled query per dialect adapter (one per database: its transactions share it). */
  private readonly compiled = new WeakMap<object, Compiled>();

  /**
   * @param slots how many values a run gives.
   * @param build the twin: the query written with kysely, given one placeholder per value, in
   *   the order of the values. Each placeholder must reach the query as a value of its own.
   *   Placeholders are typed `never` so that each fits whatever column it is written to.
   */
  constructor(
    private readonly slots: number,
    private readonly build: (db: Kysely<DB>, ...values: never[]) => Compilable<Row>,
  ) {}

  /** Runs the query on `db` (a database or a transaction) with `values`, in the order of the slots. */
  async run(db: Kysely<DB>, values: Values): Promise<QueryResult<Row>> {
    return db.executeQuery<Row>(this.compile(db, values));
  }

  /** The query as `run` would send it; what the tests compare with the twin built with the same values. */
  compile(db: Kysely<DB>, values: Values): CompiledQuery<Row> {
    if (values.length !== this.slots)
      throw new RangeError(`This query takes ${this.slots} values, not ${values.length}.`);
    const compiled = this.compiledFor(db);
    const parameters = compiled.parameters.map((parameter) =>
      parameter instanceof Slot ? values[parameter.index] : parameter,
    );
    if (QueryTemplate.checkTwins) {
      const twin = this.build(db, ...(values as unknown as never[])).compile();
      if (twin.sql !== compiled.sql || !isDeepStrictEqual(twin.parameters, parameters)) {
        throw new Error(
          `A query template differs from its twin:\n${compiled.sql}\n${JSON.stringify(parameters)}\nagainst\n${twin.sql}\n${JSON.stringify(twin.parameters)}`,
        );
      }
    }
    return CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<Row>;
  }

  private compiledFor(db: Kysely<DB>): Compiled {
    const adapter = db.getExecutor().adapter;
    let compiled = this.compiled.get(adapter);
    if (!compiled) {
      const slots = Array.from({ length: this.slots }, (_, i) => new Slot(i));
      const query = this.build(db, ...(slots as never[])).compile();
      const used = new Set(
        query.parameters.filter((parameter) => parameter instanceof Slot).map((slot) => (slot as Slot).index),
      );
      if (used.size !== this.slots)
        throw new Error(`A query template uses ${used.size} of its ${this.slots} values as parameters: ${query.sql}`);
      compiled = { sql: query.sql, parameters: query.parameters };
      this.compiled.set(adapter, compiled);
    }
    return compiled;
  }
}
