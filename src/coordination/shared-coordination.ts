import { describeError, type Logger } from '../log.js';
import type { Store } from '../store/index.js';
import type { Coordination } from '../ports.js';

/** The coordination's own pool: its queries are single short statements (leases, events, heartbeats). */
const COORDINATION_CONNECTIONS = 5;

/**
 * What instances sharing the PostgreSQL database coordinate through. Loaded only then: one
 * process on SQLite needs none of it. It has a pool of its own, never the store's: the engine
 * asks it whether a turn holds a task from inside the store's transactions, where a second
 * connection of the store's pool may never come (see `PostgresCoordinationOptions.ownsDb`).
 */
export async function openSharedCoordination(
  url: string,
  store: Pick<Store, 'events' | 'feeds' | 'db'>,
  instanceId: string,
  leaseMs: number,
  log: Logger,
): Promise<Coordination> {
  const [{ PostgresCoordination }, { openPostgresDatabase, withSessionSetting }, { shareReads }] = await Promise.all([
    import('./postgres-coordination.js'),
    import('../store/postgres-database.js'),
    import('../store/reads-together.js'),
  ]);
  // Its commits do not wait for the disk: leases and heartbeats are live state, which a crash of
  // the database server ends anyway; tasks and their events are written through the store's own
  // connections, durably.
  const db = await openPostgresDatabase(withSessionSetting(url, 'synchronous_commit', 'off'), {
    maxConnections: COORDINATION_CONNECTIONS,
    instanceId,
    idleInTransactionMs: leaseMs,
    onConnectionError: (error) =>
      log.warn('a database connection failed; the next query opens another', { error: describeError(error) }),
  });
  // Its reads (is a turn running?) join the store's in one statement, sent on this pool.
  shareReads(store.db, db);
  const coordination = new PostgresCoordination({
    db,
    ownsDb: true,
    url,
    events: store.events!,
    feeds: store.feeds,
    instanceId,
    leaseMs,
    onError: (error, what) => log.warn(`instance coordination: ${what}`, { error: describeError(error) }),
  });
  try {
    await coordination.start();
  } catch (error) {
    await coordination.close().catch(() => undefined);
    throw error;
  }
  return coordination;
}
