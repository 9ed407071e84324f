import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';
import { sql } from 'kysely';
import { isHarnessError } from '../../src/errors.js';
import type { ClaimAcceptance, TaskEdit } from '../../src/ports.js';
import { WRITE_REFUSED } from '../../src/store/claim-acceptance.js';
import { callContext, newTask, POSTGRESQL, SQLITE, tempStore, type TempStore } from './helpers.js';

/**
 * Issue 36: on PostgreSQL a command's reply and its message's claim (CMD-34) go in one write,
 * one statement when the kept image is current: the claim accepted with the reply, and the write
 * refused (nothing stored) when the claim is no longer open, as when another instance answered
 * the message first; the write's version guard and its turn fencing stay as they were.
 */

const alice = callContext('alice');
const scope = { tenant: '', owner: 'alice' };

const refusedAsTaken = (error: unknown) =>
  isHarnessError(error) && error.code === 'store_failed' && /answered by another instance/.test(error.message);

describe('a message claim accepted with the write of its reply (PostgreSQL)', POSTGRESQL.needs, () => {
  let temp: TempStore;
  beforeEach(async () => {
    temp = await tempStore(POSTGRESQL);
  });
  afterEach(async () => {
    await temp.dispose();
  });

  /** A reply on `task` carrying `claim`: what `TaskWrites.post` asks of the store. */
  const replyWith =
    (claim: ClaimAcceptance | undefined, text = 'the reply') =>
    (task: Task): TaskEdit => {
      const update = replyUpdate(task, text);
      return { events: [AgentEvent.statusUpdate(update)], claim: claim && { ...claim, reply: update } };
    };

  async function openClaim(messageId = randomUUID()): Promise<ClaimAcceptance> {
    const digest = 'd'.repeat(64);
    assert.deepStrictEqual(await temp.store.claims.claim(scope, messageId, digest), { kind: 'new', idReused: false });
    return { ...scope, messageId, digest, reply: undefined };
  }

  async function row(taskId: string) {
    const { version, generation } = await temp.store.db
      .selectFrom('tasks')
      .select(['version', 'generation'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    return { version, generation: Number(generation) };
  }

  async function claimRow(claim: ClaimAcceptance) {
    return temp.store.db
      .selectFrom('message_claims')
      .select(['task_id', 'reply_json'])
      .where('message_id', '=', claim.messageId)
      .executeTakeFirstOrThrow();
  }

  it('the store records claims where it is shared, and the reply and the claim go in one statement', async () => {
    assert.equal(temp.store.tasks.recordsClaims, true);
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.create(task, alice);
    await temp.store.tasks.load(task.id, alice); // kept: the write goes in one statement
    const claim = await openClaim();
    const statements: string[] = [];
    const written = await countingStatements(statements, () =>
      temp.store.tasks.modify(task.id, alice, replyWith(claim)),
    );
    // (The store's pruning of old claims could tick meanwhile: not the write's.)
    const writes = statements.filter((text) => !/^delete from "message_claims"/.test(text));
    assert.equal(writes.length, 1, `one statement, not ${writes.join(' | ')}`);
    assert.equal(written?.logged.length, 1);
    const stored = await claimRow(claim);
    assert.equal(stored.task_id, task.id);
    assert.match(stored.reply_json ?? '', /the reply/);
    // A resend of the message now gets what the first went to.
    const again = await temp.store.claims.claim(scope, claim.messageId, claim.digest);
    assert.equal(again.kind, 'accepted');
    assert.equal(again.kind === 'accepted' && again.outcome.taskId, task.id);
  });

  it('a claim accepted elsewhere first (a duplicate message) refuses the write: nothing is stored', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.create(task, alice);
    await temp.store.tasks.load(task.id, alice);
    const claim = await openClaim();
    // Another instance took the message over and answered it.
    await temp.store.claims.accept(scope, claim.messageId, claim.digest, { taskId: task.id });
    const before = await row(task.id);
    await assert.rejects(temp.store.tasks.modify(task.id, alice, replyWith(claim)), refusedAsTaken);
    assert.deepStrictEqual(await row(task.id), before, 'the task not written, its log not added to');
    assert.equal((await claimRow(claim)).reply_json, null, 'the claim kept as the other instance accepted it');
    // A claim pruned away (no record) refuses it too.
    const gone = { ...claim, messageId: randomUUID() };
    await assert.rejects(temp.store.tasks.modify(task.id, alice, replyWith(gone)), refusedAsTaken);
    assert.deepStrictEqual(await row(task.id), before);
  });

  it('another instance writing the task first: decided again in the locked transaction, the claim accepted once with the last answer', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.create(task, alice);
    await temp.store.tasks.load(task.id, alice); // kept here, soon outdated
    const other = await temp.another();
    await other.tasks.modify(task.id, alice, replyWith(undefined, 'from the other instance'));
    const claim = await openClaim();
    const seen: number[] = [];
    const written = await temp.store.tasks.modify(task.id, alice, (current) => {
      seen.push(current.history.length);
      return replyWith(claim, `reply ${seen.length}`)(current);
    });
    assert.equal(seen.length, 2, 'decided on the kept image, then on the locked row');
    assert.deepStrictEqual(
      written?.logged.map((entry) => entry.generation),
      [3],
    );
    assert.match((await claimRow(claim)).reply_json ?? '', /reply 2/, "the claim keeps the last run's reply");
  });

  it("a fenced turn's write carrying a claim is refused as fenced, and the claim stays open", async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await temp.store.tasks.create(task, alice);
    await temp.store.tasks.modify(task.id, alice, replyWith(undefined, 'the new turn'), 9);
    const claim = await openClaim();
    const before = await row(task.id);
    await assert.rejects(
      temp.store.tasks.modify(task.id, alice, replyWith(claim), 5),
      (error: unknown) => isHarnessError(error) && error.code === 'turn_fenced',
    );
    assert.deepStrictEqual(await row(task.id), before);
    assert.equal((await claimRow(claim)).task_id, null, 'still open: the message may be answered yet');
  });

  it('write_refused (migration 0020) undoes the statement it is called in', async () => {
    const task = newTask();
    await temp.store.tasks.create(task, alice);
    const before = await row(task.id);
    await assert.rejects(
      sql`with upd as (update tasks set version = version + 1 where id = ${task.id} returning id)
        select write_refused('undone') from upd`.execute(temp.store.db),
      (error: unknown) => (error as { code?: unknown }).code === WRITE_REFUSED,
    );
    assert.deepStrictEqual(await row(task.id), before);
  });
});

describe('a message claim recorded with the write of its reply (SQLite, alone)', () => {
  it("the claim goes in the reply's transaction, accepted: one commit, and a resend, after a restart too, gets the first reply", async () => {
    const commits: boolean[] = [];
    const temp = await tempStore(SQLITE, { onTransaction: (_seconds, committed) => commits.push(committed) });
    try {
      assert.equal(temp.store.tasks.recordsClaims, true);
      const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      await temp.store.tasks.create(task, alice);
      const messageId = randomUUID();
      const digest = 'e'.repeat(64);
      assert.deepStrictEqual(await temp.store.claims.claim(scope, messageId, digest), { kind: 'new', idReused: false });
      const claim: ClaimAcceptance = { ...scope, messageId, digest, reply: undefined };
      commits.splice(0);
      const written = await temp.store.tasks.modify(task.id, alice, (current) => {
        const update = replyUpdate(current, 'the reply');
        return { events: [AgentEvent.statusUpdate(update)], claim: { ...claim, reply: update } };
      });
      assert.equal(written?.logged.length, 1);
      assert.deepStrictEqual(commits, [true], 'the reply and its claim in one transaction');
      for (const restart of [false, true]) {
        const store = restart ? await temp.reopen() : temp.store;
        const again = await store.claims.claim(scope, messageId, digest);
        assert.equal(again.kind, 'accepted');
        assert.equal(again.kind === 'accepted' && again.outcome.taskId, task.id);
        const text = again.kind === 'accepted' ? again.outcome.reply?.status?.message?.parts[0]?.content : undefined;
        assert.deepStrictEqual(text, { $case: 'text', value: 'the reply' });
      }
    } finally {
      await temp.dispose();
    }
  });
});

/** A command's reply on `task`: its state kept. */
function replyUpdate(task: Task, text: string): TaskStatusUpdateEvent {
  return {
    taskId: task.id,
    contextId: task.contextId,
    status: {
      state: task.status?.state ?? TaskState.TASK_STATE_INPUT_REQUIRED,
      message: {
        messageId: randomUUID(),
        contextId: task.contextId,
        taskId: task.id,
        role: Role.ROLE_AGENT,
        parts: [{ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: {} }],
        metadata: {},
        extensions: [],
        referenceTaskIds: [],
      },
      timestamp: new Date().toISOString(),
    },
    metadata: {},
  };
}

/** Runs `work`, gathering the text of each statement the store's pool sends meanwhile. */
async function countingStatements<T>(statements: string[], work: () => Promise<T>): Promise<T> {
  const pg = await import('pg');
  const query = pg.default.Client.prototype.query;
  pg.default.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text;
    statements.push(text ?? '?');
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    return await work();
  } finally {
    pg.default.Client.prototype.query = query;
  }
}
