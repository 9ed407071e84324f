import type { DatabaseConnection, Dialect, Driver } from 'kysely';

/** Told of each transaction's end: how long it ran, from BEGIN to COMMIT or ROLLBACK, and which. */
export type TransactionListener = (seconds: number, committed: boolean) => void;

/**
 * `dialect`, its transactions timed for `listener` (the store's metrics). The store opens them
 * in a dozen places (`db.transaction()`); every one goes through the driver's begin and
 * commit or rollback, so the driver is where one timing sees them all.
 */
export function timedTransactions(dialect: Dialect, listener: TransactionListener | undefined): Dialect {
  if (!listener) return dialect;
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => timedDriver(dialect.createDriver(), listener),
  };
}

function timedDriver(driver: Driver, listener: TransactionListener): Driver {
  // A connection runs one transaction at a time: its begin time is kept until its end.
  const began = new WeakMap<DatabaseConnection, number>();
  const ended = (connection: DatabaseConnection, committed: boolean) => {
    const start = began.get(connection);
    if (start === undefined) return;
    began.delete(connection);
    listener((performance.now() - start) / 1000, committed);
  };
  // Bound to the driver itself: kysely's drivers keep their state in private fields.
  return new Proxy(driver, {
    get(target, key) {
      switch (key) {
        case 'beginTransaction':
          return async (connection: DatabaseConnection, settings: Parameters<Driver['beginTransaction']>[1]) => {
            began.set(connection, performance.now());
            await target.beginTransaction(connection, settings);
          };
        case 'commitTransaction':
          return async (connection: DatabaseConnection) => {
            try {
              await target.commitTransaction(connection);
            } finally {
              ended(connection, true);
            }
          };
        case 'rollbackTransaction':
          return async (connection: DatabaseConnection) => {
            try {
              await target.rollbackTransaction(connection);
            } finally {
              ended(connection, false);
            }
          };
        default: {
          const value: unknown = Reflect.get(target, key, target);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        }
      }
    },
  });
}
