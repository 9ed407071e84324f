/**
 * The statements the harness sends its database for one command, on SQLite and on PostgreSQL:
 * a count, not a time, so it is the same on a busy machine and a quiet one.
 *
 *   node --import tsx bench/round-trips.ts [--command /status]
 *
 * One harness per backend runs in this process on the embedded defaults (a SQLite file; a
 * PostgreSQL schema of its own, as `serve --database` runs it). A task is made by a first
 * command and warmed by a second; the third is counted: every statement the harness sends
 * (`pg.Client#query` on PostgreSQL, each run of a prepared statement on SQLite) from the
 * request until its answer and every statement sent then is answered (the wake-up to the other
 * instances goes after the reply's commit, unawaited), each printed. On PostgreSQL each is a
 * round trip to the server; on SQLite a call into the library, in the process. The instance's
 * heartbeat (every `leaseMs / 3`) could land in the window; it would show in the list.
 * ROUND_TRIPS_WIDTH=2000 prints more of each statement (160 characters by default).
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { defaultConfig } from '../src/config/schema.js';
import { startHarness } from '../src/harness.js';
import { tempDir } from './lib/cleanup.js';
import { benchSchema } from './lib/postgres.js';
import { header } from './lib/report.js';

const { values: flags } = parseArgs({ options: { command: { type: 'string', default: '/status' } } });

let counted: string[] | undefined;
function count(statement: unknown): void {
  if (!counted) return;
  const text = typeof statement === 'string' ? statement : (statement as { text?: string })?.text;
  counted.push((text ?? '?').replace(/\s+/g, ' ').trim());
}
/** PostgreSQL statements sent and not yet answered, and who waits for there to be none. */
let inFlight = 0;
let allAnswered: (() => void) | undefined;
const answered = () => {
  if (--inFlight === 0) allAnswered?.();
};
const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  count(args[0]);
  const result = (pgQuery as (...a: unknown[]) => unknown).apply(this, args);
  if (result instanceof Promise) {
    inFlight++;
    result.then(answered, answered);
  }
  return result;
} as typeof pgQuery;

/**
 * Resolves once every statement sent is answered: what the command set going without waiting
 * for it (the wake-up sent after the reply's commit) is counted with it, however late.
 */
async function statementsAnswered(): Promise<void> {
  while (inFlight > 0) await new Promise<void>((resolve) => (allAnswered = resolve));
  allAnswered = undefined;
}
// The harness keeps some SQLite statements prepared: what is counted is each run of one.
const statementPrototype = Object.getPrototypeOf(new BetterSqlite3(':memory:').prepare('select 1')) as Record<
  string,
  (...args: unknown[]) => unknown
>;
for (const method of ['run', 'get', 'all', 'iterate']) {
  const run = statementPrototype[method]!;
  statementPrototype[method] = function (this: { source: string }, ...args: unknown[]) {
    count(this.source);
    return run.apply(this, args);
  };
}

async function statementsFor(databaseUrl: string | undefined): Promise<string[]> {
  const harness = await startHarness({
    config: defaultConfig(),
    dataDir: tempDir('round-trips'),
    databaseUrl,
    host: '127.0.0.1',
    port: 0,
  });
  try {
    const send = async (taskId?: string): Promise<string> => {
      const response = await fetch(`${harness.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: flags.command }], taskId } },
        }),
      });
      const body = (await response.json()) as { result?: { task?: { id: string } }; error?: unknown };
      if (!body.result?.task) throw new Error(`no task in the answer: ${JSON.stringify(body.error)}`);
      return body.result.task.id;
    };
    const taskId = await send();
    await send(taskId);
    await statementsAnswered();
    counted = [];
    await send(taskId);
    await statementsAnswered();
    const statements = counted;
    counted = undefined;
    return statements;
  } finally {
    await harness.close();
  }
}

header(`Database statements per ${flags.command} on a task (SQLite and PostgreSQL)`);
const sqlite = await statementsFor(undefined);
const schema = await benchSchema('round-trips');
let postgres: string[];
try {
  postgres = await statementsFor(schema.url);
} finally {
  await schema.drop();
}
for (const [name, statements] of [
  ['SQLite', sqlite],
  ['PostgreSQL', postgres],
] as const) {
  console.log(`\n${name}: ${statements.length} statements`);
  for (const statement of statements)
    console.log(`  - ${statement.slice(0, Number(process.env.ROUND_TRIPS_WIDTH ?? 160))}`);
}
console.log(`\n${flags.command}: ${sqlite.length} statements on SQLite, ${postgres.length} round trips on PostgreSQL`);
