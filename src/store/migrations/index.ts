import type { Migration } from 'kysely';
import { createTaskTables } from './0001-task-tables.js';
import { createHarnessTables } from './0002-harness-tables.js';
import { createTaskLinks } from './0003-task-links.js';
import { contextModelsByUser } from './0004-context-models-by-user.js';
import { messageClaims } from './0005-message-claims.js';
import { taskVersions } from './0006-task-versions.js';
import { coordinationTables } from './0007-coordination.js';
import { claimants } from './0008-claimants.js';
import { taskEventSeq } from './0009-task-event-seq.js';
import { claimsByContent } from './0010-claims-by-content.js';
import { messagesByContent } from './0011-messages-by-content.js';
import { turnFencesMigration } from './0012-turn-fences.js';
import { taskLogMigration } from './0013-task-log.js';
import { pushMigration } from './0014-push.js';
import { taskQueueMigration } from './0015-task-queue.js';
import { pushConfigsByUserMigration } from './0016-push-configs-by-user.js';
import { taskLastUsageMigration } from './0017-task-last-usage.js';
import { toolGrantsMigration } from './0018-tool-grants.js';
import { pushLeasesMigration } from './0019-push-leases.js';
import { writeRefusedMigration } from './0020-write-refused.js';
import { schedulesMigration } from './0021-schedules.js';
import { scheduleHooksMigration } from './0022-schedule-hooks.js';
import { schedulePushConfigsMigration } from './0023-schedule-push-configs.js';
import { hookIdempotencyKeysMigration } from './0024-hook-idempotency-keys.js';

/**
 * The store's schema, as kysely migrations kept in code so that start-up creates or upgrades
 * the tables with no manual step and no migration files to ship next to `dist/`. One file per
 * migration, named by its number; the names below are the ids kept in the migrations table.
 *
 * Only portable column types and constraints are used (text, integer, bigint, composite
 * primary keys, unique constraints, plain indexes), so the same migrations run on SQLite and
 * on PostgreSQL; where the two differ, the migration says so. Never edit a migration that has
 * shipped: add the next one.
 */

/** Every migration by name; kysely applies them in name order. */
export const migrations: Readonly<Record<string, Migration>> = {
  '0001_task_tables': createTaskTables,
  '0002_harness_tables': createHarnessTables,
  '0003_task_links': createTaskLinks,
  '0004_context_models_by_user': contextModelsByUser,
  '0005_message_claims': messageClaims,
  '0006_task_versions': taskVersions,
  '0007_coordination': coordinationTables,
  '0008_claimants': claimants,
  '0009_task_event_seq': taskEventSeq,
  '0010_claims_by_content': claimsByContent,
  '0011_messages_by_content': messagesByContent,
  '0012_turn_fences': turnFencesMigration,
  '0013_task_log': taskLogMigration,
  '0014_push': pushMigration,
  '0015_task_queue': taskQueueMigration,
  '0016_push_configs_by_user': pushConfigsByUserMigration,
  '0017_task_last_usage': taskLastUsageMigration,
  '0018_tool_grants': toolGrantsMigration,
  '0019_push_leases': pushLeasesMigration,
  '0020_write_refused': writeRefusedMigration,
  '0021_schedules': schedulesMigration,
  '0022_schedule_hooks': scheduleHooksMigration,
  '0023_schedule_push_configs': schedulePushConfigsMigration,
  '0024_hook_idempotency_keys': hookIdempotencyKeysMigration,
};
