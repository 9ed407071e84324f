import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { isPostgres } from './dialect.js';
import { pushConfigsByUserMigration, pushMigration } from './push-store.js';
import { taskLogMigration } from './task-log.js';
import { turnFencesMigration } from './turn-leases.js';
import { taskQueueMigration } from './task-queue.js';
import { taskLastUsageMigration } from './task-state-store.js';
import { toolGrantsMigration } from './tool-grants.js';

/**
 * The store's schema, as kysely migrations kept in code so that start-up creates or upgrades
 * the tables with no manual step and no migration files to ship next to `dist/`.
 *
 * Only portable column types and constraints are used (text, integer, bigint, composite
 * primary keys, unique constraints, plain indexes), so the same migrations run on SQLite and
 * on PostgreSQL; where the two differ, the migration says so. Never edit a migration that has
 * shipped: add the next one.
 */

/**
 * 0001: tasks split so that one event writes only what it changed. History messages,
 * artifact headers and artifact parts are rows of their own, appended by sequence number;
 * the task row holds what is replaced as a whole (state, status, metadata).
 */
const createTaskTables: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('tasks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('state', 'integer', (c) => c.notNull())
      .addColumn('status_json', 'text')
      .addColumn('metadata_json', 'text', (c) => c.notNull())
      // '' when the status has no timestamp: list orders and pages by this text, like the SDK.
      .addColumn('status_timestamp', 'text', (c) => c.notNull())
      // Milliseconds since the epoch, for `statusTimestampAfter`; null when unparseable.
      .addColumn('status_time_ms', 'bigint')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('tasks_scope_context_idx')
      .on('tasks')
      .columns(['tenant', 'owner', 'context_id'])
      .execute();
    await db.schema
      .createIndex('tasks_scope_status_time_idx')
      .on('tasks')
      .columns(['tenant', 'owner', 'status_timestamp', 'id'])
      .execute();
    await db.schema.createIndex('tasks_status_timestamp_idx').on('tasks').column('status_timestamp').execute();
    await db.schema.createIndex('tasks_state_idx').on('tasks').column('state').execute();

    await db.schema
      .createTable('task_messages')
      .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('message_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_messages_pkey', ['task_id', 'seq'])
      .addUniqueConstraint('task_messages_message_id_key', ['task_id', 'message_id'])
      .execute();

    await db.schema
      .createTable('task_artifacts')
      .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
      .addColumn('artifact_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('header_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_artifacts_pkey', ['task_id', 'artifact_id'])
      .execute();

    await db.schema
      .createTable('artifact_parts')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('artifact_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('part_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('artifact_parts_pkey', ['task_id', 'artifact_id', 'seq'])
      .addForeignKeyConstraint(
        'artifact_parts_artifact_fkey',
        ['task_id', 'artifact_id'],
        'task_artifacts',
        ['task_id', 'artifact_id'],
        (c) => c.onDelete('cascade'),
      )
      .execute();
  },
};

/**
 * 0002: state the harness owns (model choices, token usage) and the command reply log. No
 * foreign keys to `tasks`: a model may be chosen for a task before its first save.
 */
const createHarnessTables: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('task_settings')
      .addColumn('task_id', 'text', (c) => c.primaryKey())
      .addColumn('model', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('context_settings')
      .addColumn('context_id', 'text', (c) => c.primaryKey())
      .addColumn('model', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('task_usage')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('input_tokens', 'bigint', (c) => c.notNull())
      .addColumn('output_tokens', 'bigint', (c) => c.notNull())
      .addColumn('first_seq', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_usage_pkey', ['task_id', 'model'])
      .execute();
    await db.schema
      .createTable('command_replies')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('reply_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('command_replies_pkey', ['task_id', 'message_id'])
      .execute();
  },
};

/** 0003: which task started which (sub-tasks), in start order. */
const createTaskLinks: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('task_links')
      .addColumn('child_id', 'text', (c) => c.primaryKey())
      .addColumn('parent_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('task_links_parent').on('task_links').columns(['parent_id', 'seq']).execute();
  },
};

/**
 * 0004: the model each user last chose in a context (CMD-22, CMD-35). Context ids are a
 * client's choice, so one id may be two users' contexts. Replaces `context_settings`; a choice
 * moves to each user who has a task in the context with that model chosen (who made the
 * choice was not recorded).
 */
const contextModelsByUser: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('context_models')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('context_models_pkey', ['tenant', 'owner', 'context_id'])
      .execute();
    await db
      .insertInto('context_models')
      .columns(['tenant', 'owner', 'context_id', 'model'])
      .expression(
        db
          .selectFrom('context_settings as c')
          .innerJoin('tasks as t', 't.context_id', 'c.context_id')
          .innerJoin('task_settings as s', (join) =>
            join.onRef('s.task_id', '=', 't.id').onRef('s.model', '=', 'c.model'),
          )
          .select(['t.tenant', 't.owner', 'c.context_id', 'c.model'])
          .distinct(),
      )
      .execute();
    await db.schema.dropTable('context_settings').execute();
  },
};

/**
 * 0005: every message id a user sent (CMD-13, CMD-34), recorded before the message is
 * processed, with the task it went to and, for a command, its reply: one record for resends of
 * turns and commands alike. Replaces `command_replies`, whose rows move over under their
 * task's tenant and owner, with an empty digest (content unknown).
 */
const messageClaims: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('message_claims')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text')
      .addColumn('reply_json', 'text')
      .addPrimaryKeyConstraint('message_claims_pkey', ['tenant', 'owner', 'message_id'])
      .execute();
    await db
      .insertInto('message_claims')
      .columns(['tenant', 'owner', 'message_id', 'digest', 'task_id', 'reply_json'])
      .expression(
        db
          .selectFrom('command_replies as r')
          .innerJoin('tasks as t', 't.id', 'r.task_id')
          .select(['t.tenant', 't.owner', 'r.message_id', sql<string>`''`.as('digest'), 'r.task_id', 'r.reply_json']),
      )
      .onConflict((oc) => oc.columns(['tenant', 'owner', 'message_id']).doNothing())
      .execute();
    await db.schema.dropTable('command_replies').execute();
  },
};

/**
 * 0006: a version on each task row, counting its updates, for instances sharing the database:
 * a save locks the row and compares its version with the image it planned against, a load
 * compares it with the image it keeps (`task-store.ts`).
 *
 * On PostgreSQL also the binary collation ("C") for the text that tasks are listed and paged
 * by: a database's default collation (e.g. en_US) orders punctuation and case otherwise than
 * SQLite and the SDK's in-memory store, whose order `list` keeps. SQLite compares bytes already.
 */
const taskVersions: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .alterTable('tasks')
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    if (isPostgres(db)) {
      await sql`alter table tasks alter column id type text collate "C", alter column status_timestamp type text collate "C"`.execute(
        db,
      );
    }
  },
};

/**
 * 0007: what instances sharing a PostgreSQL database coordinate through
 * (`PostgresCoordination`). Each running instance has a row whose heartbeat (ms since the
 * epoch, by the database's clock) it renews; a turn's lease names the instance running it, and
 * cannot name an instance that has no row (the foreign key is what lets a sweeper take a dead
 * instance's leases with no lease slipping in meanwhile); a task's events are appended by seq
 * for the instances following the task and pruned minutes later, while the last seq given to
 * each task is kept for good, so no seq is ever given twice. On SQLite the tables exist and stay
 * empty: one process needs none of it.
 */
const coordinationTables: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('instances')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('heartbeat', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('turn_leases')
      .addColumn('task_id', 'text', (c) => c.primaryKey())
      .addColumn('instance_id', 'text', (c) => c.notNull().references('instances.id'))
      .execute();
    await db.schema.createIndex('turn_leases_instance_idx').on('turn_leases').column('instance_id').execute();
    await db.schema
      .createTable('task_events')
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('event_json', 'text', (c) => c.notNull())
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_events_pkey', ['task_id', 'seq'])
      .execute();
    await db.schema.createIndex('task_events_created_idx').on('task_events').column('created_ms').execute();
    await db.schema
      .createTable('task_event_seqs')
      .addColumn('task_id', 'text', (c) => c.primaryKey())
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .execute();
  },
};

/**
 * 0008: which instance made each message claim, so that an instance finding a claim not yet
 * accepted can tell a request still going elsewhere (leave it) from one cut short (take it over).
 */
const claimants: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('message_claims').addColumn('claimant', 'text').execute();
  },
};

/**
 * 0009: the seq of the last handed-on event each task row reflects (see `TaskEventLog`). Rows
 * written before it reflect none they need: no follower of theirs was running across the upgrade.
 */
const taskEventSeq: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .alterTable('tasks')
      .addColumn('event_seq', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};

/**
 * 0010: a message is its id and its content (CMD-34), so the content digest joins the key: one
 * id may carry several messages, each with its own claim. Each claim is dated, for pruning
 * (existing ones as of the upgrade). Claims from before digests ('', moved over from
 * `command_replies` by 0005) are dropped: their content is unknown, so no resend can match them.
 */
const claimsByContent: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('message_claims').renameTo('message_claims_0009').execute();
    await db.schema
      .createTable('message_claims')
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text')
      .addColumn('reply_json', 'text')
      .addColumn('claimant', 'text')
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      // Named anew: on PostgreSQL the renamed table keeps the name `message_claims_pkey` until it is dropped.
      .addPrimaryKeyConstraint('message_claims_content_pkey', ['tenant', 'owner', 'message_id', 'digest'])
      .execute();
    await db.schema.createIndex('message_claims_created_idx').on('message_claims').column('created_ms').execute();
    await db
      .insertInto('message_claims')
      .columns(['tenant', 'owner', 'message_id', 'digest', 'task_id', 'reply_json', 'claimant', 'created_ms'])
      .expression(
        db
          .selectFrom('message_claims_0009')
          .select(['tenant', 'owner', 'message_id', 'digest', 'task_id', 'reply_json', 'claimant'])
          .select(sql.lit(Date.now()).as('created_ms'))
          .where('digest', '<>', ''),
      )
      .execute();
    await db.schema.dropTable('message_claims_0009').execute();
  },
};

/**
 * 0011: one id may carry several messages of a task's history (CMD-34: the same id with other
 * content is a new message), so `task_messages` loses its unique key on the message id; the save
 * plan tells stored messages by id and content (`save-plan.ts`). PostgreSQL drops the key;
 * SQLite cannot drop a constraint, so the table is built anew and its rows copied.
 */
const messagesByContent: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (isPostgres(db)) {
      await db.schema.alterTable('task_messages').dropConstraint('task_messages_message_id_key').execute();
      return;
    }
    await db.schema.alterTable('task_messages').renameTo('task_messages_0010').execute();
    await db.schema
      .createTable('task_messages')
      .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('message_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('task_messages_pkey', ['task_id', 'seq'])
      .execute();
    await db
      .insertInto('task_messages')
      .columns(['task_id', 'seq', 'message_id', 'message_json'])
      .expression(db.selectFrom('task_messages_0010').select(['task_id', 'seq', 'message_id', 'message_json']))
      .execute();
    await db.schema.dropTable('task_messages_0010').execute();
  },
};

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
};

/** Hands kysely's `Migrator` the migrations above instead of reading a folder. */
export class InCodeMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { ...migrations };
  }
}
