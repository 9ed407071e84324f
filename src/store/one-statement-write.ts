import { sql, type Kysely } from 'kysely';
import { acceptClaimAfter, claimOpen, refusedUnlessClaimed, WRITE_REFUSED } from './claim-acceptance.js';
import type { Database } from './database.js';
import { messageRows, partRows, taskRowChanges } from './plan-writes.js';
import { isEmptyPlan } from './save-plan.js';
import type { Commit } from './task-commit.js';
import { logRows } from './task-log.js';

/**
 * A shared write (PostgreSQL) in one statement, when the image it was planned against is still
 * the row's: the task row's update, guarded by that version (and by the turn's fence), and every
 * insert of the plan guarded by that update, in data-modifying CTEs. One round trip instead of a
 * transaction's six: each costs the harness about 0.3 ms of CPU (bench/RESULTS.md, round 3), more
 * than the statements themselves. When the guard fails (another instance wrote first, or took
 * the turn over) nothing is written, and the caller writes in a transaction that locks the row,
 * reads it again and decides again (`TaskImages.commit`). Its rows come from the builders the
 * transaction's statements use (`plan-writes.ts`, `task-log.ts`).
 *
 * A plan that replaces an artifact's parts, or rewrites the end of the history, takes the
 * transaction: its delete and its inserts of the same keys cannot share one statement's snapshot.
 * So does a new task (nothing to guard: it is an insert) and a write with records alongside.
 */
export function fitsOneStatement(commit: Commit): boolean {
  const { plan } = commit;
  return (
    !commit.alongside &&
    !plan.isNew &&
    !isEmptyPlan(plan) &&
    plan.messagesFrom === undefined &&
    plan.artifacts.every((write) => write.kind !== 'replace')
  );
}

/**
 * Resolves once written, saying whether push deliveries were owed; undefined when the row is no
 * longer of `version`, is fenced by a greater epoch, or the commit's message claim is no longer
 * open (nothing was written). The claim is accepted in the statement (`claim-acceptance.ts`);
 * the rare claim accepted elsewhere after the statement's snapshot undoes it (`WRITE_REFUSED`).
 */
export async function writeInOneStatement(
  db: Kysely<Database>,
  commit: Commit,
  version: number,
): Promise<{ pushed: boolean } | undefined> {
  const { identity, plan, logged, fence, now } = commit;
  const taskId = identity.id;
  const changes = taskRowChanges(plan, now.toISOString(), fence);
  const sets = [
    sql`version = version + 1`,
    ...Object.entries(changes).map(([column, value]) => sql`${sql.ref(column)} = ${value}`),
  ];
  const fenced = fence !== undefined ? sql` and fence_epoch <= ${fence}` : sql``;
  const { claim } = commit;
  const claimed = claim ? claimOpen(claim) : sql``;
  const ctes = [
    sql`upd as (update tasks set ${sql.join(sets)} where id = ${taskId} and tenant = ${identity.tenant} and owner = ${identity.owner} and version = ${version}${fenced}${claimed} returning id)`,
  ];
  if (claim) ctes.push(acceptClaimAfter(taskId, claim));
  const messages = messageRows(taskId, plan);
  if (messages.length > 0) {
    ctes.push(sql`m as (insert into task_messages (task_id, seq, message_id, message_json)
      select upd.id, x.seq, x.message_id, x.json from upd,
      unnest(${column(messages, 1)}::int[], ${column(messages, 2)}::text[], ${column(messages, 3)}::text[]) as x(seq, message_id, json))`);
  }
  const events = logRows(taskId, logged, now.getTime());
  if (events.length > 0) {
    ctes.push(sql`e as (insert into task_events (task_id, generation, event_json, created_ms)
      select upd.id, x.generation, x.json, ${now.getTime()} from upd,
      unnest(${events.map((e) => e.generation)}::bigint[], ${events.map((e) => e.event_json)}::text[]) as x(generation, json)
      returning task_id, generation, event_json)`);
    // The outbox (`push-outbox.ts`): a delivery per config of the task and event, with the event, due at once.
    ctes.push(sql`pd as (insert into push_deliveries (task_id, config_id, generation, event_json, state, attempts, next_attempt_ms)
      select c.task_id, c.config_id, e.generation, e.event_json, 'pending', 0, 0
      from e join push_configs c on c.task_id = e.task_id returning 1)`);
  }
  const inserted = plan.artifacts.filter((write) => write.kind === 'insert');
  if (inserted.length > 0) {
    ctes.push(sql`a as (insert into task_artifacts (task_id, artifact_id, seq, header_json)
      select upd.id, x.artifact_id, x.seq, x.header from upd,
      unnest(${inserted.map((w) => w.artifactId)}::text[], ${inserted.map((w) => w.seq)}::int[], ${inserted.map((w) => w.headerJson)}::text[]) as x(artifact_id, seq, header))`);
  }
  const headers = plan.artifacts.filter((write) => write.kind === 'update' && write.headerChanged);
  if (headers.length > 0) {
    ctes.push(sql`h as (update task_artifacts set header_json = x.header
      from upd, unnest(${headers.map((w) => w.artifactId)}::text[], ${headers.map((w) => w.headerJson)}::text[]) as x(artifact_id, header)
      where task_artifacts.task_id = upd.id and task_artifacts.artifact_id = x.artifact_id)`);
  }
  const parts = plan.artifacts.flatMap((write) => partRows(taskId, write));
  if (parts.length > 0) {
    ctes.push(sql`p as (insert into artifact_parts (task_id, artifact_id, seq, part_json)
      select upd.id, x.artifact_id, x.seq, x.json from upd,
      unnest(${column(parts, 1)}::text[], ${column(parts, 2)}::int[], ${column(parts, 3)}::text[]) as x(artifact_id, seq, json))`);
  }
  const pushed = logged.length > 0 ? sql`(select count(*)::int from pd)` : sql`0`;
  const refused = claim ? sql`, ${refusedUnlessClaimed()} as refused` : sql``;
  let rows: Array<{ written: number; pushed: number }>;
  try {
    ({ rows } = await sql<{
      written: number;
      pushed: number;
    }>`with ${sql.join(ctes)} select count(*)::int as written, ${pushed} as pushed${refused} from upd`.execute(db));
  } catch (error) {
    if ((error as { code?: unknown })?.code === WRITE_REFUSED) return undefined;
    throw error;
  }
  return rows[0]!.written === 1 ? { pushed: rows[0]!.pushed > 0 } : undefined;
}

/** The `index`th value of each row, for `unnest`. */
function column(rows: readonly unknown[][], index: number): unknown[] {
  return rows.map((row) => row[index]);
}
