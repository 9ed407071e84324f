import { randomUUID } from 'node:crypto';
import type { HarnessOptions } from './harness-options.js';
import { describeError, type Logger } from './log.js';
import { LocalCoordination } from './coordination/local-coordination.js';
import { openSharedCoordination } from './coordination/shared-coordination.js';
import { openStore, type Store } from './store/index.js';
import type { MetricsSetup } from './telemetry/metrics-endpoint.js';
import type { Coordination } from './ports.js';

/** Where tasks live, and how this instance shares them with others (PostgreSQL) or not (SQLite). */
export interface Storage {
  /** Named once: the message claims this instance makes carry it, and its coordination. */
  instanceId: string;
  store: Store;
  coordination: Coordination;
}

export async function openStorage(options: HarnessOptions, { metrics }: MetricsSetup, log: Logger): Promise<Storage> {
  const { config } = options;
  const instanceId = randomUUID();
  const store = await openStore({
    instanceId,
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl,
    cacheBytes: config.cacheBytes,
    durability: config.durability,
    messageIdRetentionMs: config.messageIdRetentionMs,
    pushKeepFailedForMs: config.push.keepFailedForMs,
    hookKeyRetentionMs: config.schedules.hookKeyRetentionMs,
    onPushPruned: metrics && ((count) => metrics.pushDeliveriesPruned(count)),
    onConnectionError: (error) =>
      log.warn('a database connection failed; the next query opens another', { error: describeError(error) }),
    // A transaction idle for a lease is a stopped process's, holding back the takeover of its turns.
    idleInTransactionMs: config.instanceLeaseMs,
    onPruneError: (error) => log.warn('pruning old records failed', { error: describeError(error) }),
    onTransaction: metrics && ((seconds, committed) => metrics.storeTransaction(seconds, committed)),
  });
  try {
    const coordination = store.events
      ? await openSharedCoordination(options.databaseUrl!, store, instanceId, config.instanceLeaseMs, log)
      : new LocalCoordination(instanceId, async (taskId) => (await store.queue.size(taskId)) > 0);
    return { instanceId, store, coordination };
  } catch (error) {
    await store.close();
    throw error;
  }
}
