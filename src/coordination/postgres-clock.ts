import { sql } from 'kysely';

/**
 * PostgreSQL's clock, the one clock instances sharing a database compare times by: heartbeats,
 * lease expiry and event pruning are all written and judged with it, so no instance's own clock
 * (which may run fast, slow, or jump) decides whether another instance is alive.
 */

/**
 * Now as the statement runs (`clock_timestamp()`), in ms since the epoch: after any wait for a
 * lock, where `now()` is still the moment the transaction began.
 */
export const clockMs = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** Now (the transaction's start), in ms since the epoch. */
export const nowMs = sql<number>`(extract(epoch from now()) * 1000)::bigint`;

/** `ms` milliseconds before now (the transaction's start), in ms since the epoch. */
export function msAgo(ms: number) {
  return sql<number>`(extract(epoch from now()) * 1000)::bigint - ${ms}`;
}
