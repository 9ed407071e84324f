import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/database.js';

/**
 * The notification channels of instances sharing a PostgreSQL database, named after the schema,
 * as the tables live in it: deployments (or tests) sharing a database in different schemas
 * never hear each other.
 */

/** PostgreSQL's longest identifier, in bytes: a longer channel name is refused by `pg_notify`. */
const MAX_IDENTIFIER_BYTES = 63;

/** `tiny_harness_<kind>_<schema>`, with a digest of the schema when the name would be too long. */
export function channelName(kind: 'events' | 'cancel' | 'queue', schema: string): string {
  const name = `tiny_harness_${kind}_${schema}`;
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name;
  return `tiny_harness_${kind}_${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

/** The channel of `kind` for the schema `db` works in (the first of its search path). */
export async function schemaChannel(db: Kysely<Database>, kind: 'events' | 'cancel' | 'queue'): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return channelName(kind, rows[0]?.schema ?? 'public');
}
