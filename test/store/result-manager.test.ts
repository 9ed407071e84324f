import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { ServerCallContext, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/index.js';
import { SqlPushStore, SqlTaskStore } from '../../src/store/index.js';
import { applyEvent } from '../../src/store/task-log.js';
import { copyTask } from '../../src/store/stored-task.js';
import {
  artifact,
  artifactUpdate,
  message,
  newTask,
  recordingDatabase,
  reply,
  statusUpdate,
  storeBackends,
  taskEvent,
  textPart,
  texts,
  type RecordedQuery,
} from './helpers.js';

/**
 * The result manager's rules, now the store's (`applyEvent`, `task-log.ts`): how each event
 * changes a task. Then what the store writes for each event (`append`): only what the event
 * changed, whatever the task's size, on each backend (the writes are the same SQL on both).
 */

describe('applyEvent', () => {
  it('a task event on no task creates it, with history, artifacts and metadata always set', () => {
    const given = newTask();
    const created = applyEvent(undefined, taskEvent({ ...given, history: undefined!, artifacts: undefined! }))!;
    assert.deepStrictEqual(created, { ...given, history: [], artifacts: [] });
    assert.deepStrictEqual(applyEvent(undefined, taskEvent(given)), given);
    assert.notEqual(applyEvent(undefined, taskEvent(given))!.history, given.history, 'a copy');
  });

  it('a task event on a task merges: status replaced, history appended, artifacts merged by id, metadata merged', () => {
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    task.artifacts = [artifact('a', [textPart('one')]), artifact('b', [textPart('bee')])];
    task.metadata = { model: 'builtin:echo', kept: true };
    const next = message(task.id, task.contextId, Role.ROLE_USER, 'again');
    const status = { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() };
    const merged = applyEvent(
      copyTask(task),
      taskEvent({
        ...task,
        status,
        history: [next],
        artifacts: [artifact('b', [textPart('replaced')]), artifact('c', [textPart('new')])],
        metadata: { model: 'builtin:stats', added: 1 },
      }),
    )!;
    assert.deepStrictEqual(merged.status, status);
    assert.deepStrictEqual(texts(merged.history), ['hello', 'again'], 'the history is append-only');
    assert.deepStrictEqual(
      merged.artifacts.map((a) => [a.artifactId, String(a.parts[0]?.content?.value)]),
      [
        ['a', 'one'],
        ['b', 'replaced'],
        ['c', 'new'],
      ],
    );
    assert.deepStrictEqual(merged.metadata, { model: 'builtin:stats', kept: true, added: 1 });
    // A task event without history keeps the history.
    assert.deepStrictEqual(texts(applyEvent(copyTask(task), taskEvent({ ...task, history: [] }))!.history), ['hello']);
  });

  it('a status update replaces the status and appends its message to the history', () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    const answer = reply(task, 'done');
    const updated = applyEvent(copyTask(task), statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, answer))!;
    assert.equal(updated.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.deepStrictEqual(updated.status?.message, answer);
    assert.deepStrictEqual(texts(updated.history), ['hello', 'done']);
    const quiet = applyEvent(copyTask(updated), statusUpdate(task, TaskState.TASK_STATE_WORKING))!;
    assert.equal(quiet.status?.state, TaskState.TASK_STATE_WORKING);
    assert.equal(quiet.history.length, 2, 'no message, nothing added');
  });

  it('a status update for an ended task in another state is ignored (not logged); in the same state it applies', () => {
    for (const state of [
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_FAILED,
      TaskState.TASK_STATE_CANCELED,
      TaskState.TASK_STATE_REJECTED,
    ]) {
      const ended = newTask({ state });
      const late = applyEvent(
        copyTask(ended),
        statusUpdate(ended, TaskState.TASK_STATE_WORKING, reply(ended, 'too late')),
      );
      assert.equal(late, undefined, `after ${TaskState[state]}`);
      const same = applyEvent(copyTask(ended), statusUpdate(ended, state, reply(ended, 'said again')))!;
      assert.equal(same.status?.state, state);
      assert.deepStrictEqual(texts(same.history), ['hello', 'said again']);
    }
    assert.equal(applyEvent(undefined, statusUpdate(newTask(), TaskState.TASK_STATE_WORKING)), undefined, 'no task');
  });

  it("CMD-6: a status update's metadata stays out of the task", () => {
    const task = { ...newTask({ state: TaskState.TASK_STATE_WORKING }), metadata: { model: 'builtin:echo' } };
    const event = statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, reply(task, 'usage: ...'));
    (event.data as { metadata: Record<string, unknown> }).metadata = { command: 'usage', reply: { tokens: 3 } };
    const updated = applyEvent(copyTask(task), event)!;
    assert.deepStrictEqual(updated.metadata, { model: 'builtin:echo' });
  });

  it('an artifact update adds a new artifact, replaces one of the same id, or appends its parts (name, description, metadata updated)', () => {
    const task = newTask();
    let current = applyEvent(copyTask(task), artifactUpdate(task, artifact('answer', [textPart('Hel')])))!;
    current = applyEvent(current, artifactUpdate(task, artifact('answer', [textPart('lo')]), true))!;
    const renamed = { ...artifact('answer', [textPart('!')], 'Answer'), description: 'd', metadata: { k: 1 } };
    current = applyEvent(current, artifactUpdate(task, renamed, true))!;
    assert.equal(current.artifacts.length, 1);
    assert.deepStrictEqual(current.artifacts[0], {
      ...renamed,
      parts: [textPart('Hel'), textPart('lo'), textPart('!')],
    });
    current = applyEvent(current, artifactUpdate(task, artifact('other', [textPart('x')]), true))!;
    assert.deepStrictEqual(
      current.artifacts.map((a) => a.artifactId),
      ['answer', 'other'],
      'an append to no artifact adds it',
    );
    const given = artifact('answer', [textPart('Replaced')]);
    current = applyEvent(current, artifactUpdate(task, given))!;
    assert.deepStrictEqual(current.artifacts[0], given);
    given.parts.push(textPart('later'));
    assert.equal(current.artifacts[0]!.parts.length, 1, "the event's parts are copied");
    assert.equal(
      applyEvent(copyTask(task), {
        kind: 'artifactUpdate',
        data: {
          taskId: task.id,
          contextId: task.contextId,
          artifact: undefined,
          append: false,
          lastChunk: false,
          metadata: {},
        },
      }),
      undefined,
      'no artifact: nothing',
    );
  });

  it('a message event changes nothing and is not logged', () => {
    const task = newTask();
    const event: AgentExecutionEvent = { kind: 'message', data: reply(task, 'direct') };
    assert.equal(applyEvent(copyTask(task), event), undefined);
  });
});

const ctx = new ServerCallContext();

function writes(queries: RecordedQuery[]): string[] {
  return queries.map((q) => q.sql).filter((sql) => !/^select/i.test(sql));
}

for (const backend of storeBackends) {
  describe(`what SqlTaskStore.append writes per event on ${backend.name}`, backend.needs, () => {
    let db: Kysely<Database>;
    let queries: RecordedQuery[];
    let dispose: () => Promise<void>;
    let store: SqlTaskStore;
    beforeEach(async () => {
      ({ db, queries, dispose } = await recordingDatabase(backend));
      // As `openStore` wires them: alone, a task without push configs writes no outbox statement (issue 24).
      const push = new SqlPushStore(db, { shared: backend.shared });
      await push.load();
      store = new SqlTaskStore(db, { shared: backend.shared, mayOwePush: (taskId) => push.mayOwe(taskId) });
    });
    afterEach(async () => {
      await dispose();
    });

    it('appends one history row per status message, whatever the history length, with its event row', async () => {
      const task = newTask();
      for (let i = 0; i < 200; i++) task.history.push(message(task.id, task.contextId, Role.ROLE_AGENT, `old ${i}`));
      await store.create(task, ctx);
      queries.length = 0;

      const answer = reply(task, 'a command reply');
      await store.append(task.id, ctx, [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, answer)]);
      const sql = writes(queries);
      const reads = queries.filter((q) => /^select/i.test(q.sql)).map((q) => q.sql);
      if (backend.shared) {
        // One statement: the task row's update guarded by the kept image's version, the rows
        // inserted from arrays (one-statement-write.ts); no read, no transaction.
        assert.deepStrictEqual(
          sql.map((s) => s.split(' ').slice(0, 3).join(' ')),
          ['with upd as'],
        );
        assert.match(sql[0]!, /insert into task_messages/);
        assert.match(sql[0]!, /insert into task_events/);
        const rows = queries[0]!.parameters.filter(Array.isArray) as unknown[][];
        assert.ok(rows.length > 0 && rows.every((values) => values.length === 1), 'one message row, one event row');
        assert.equal(reads.length, 0, reads.join('\n'));
      } else {
        assert.deepStrictEqual(
          sql.map((s) => s.split(' ').slice(0, 3).join(' ')),
          ['begin', 'update "tasks" set', 'insert into "task_messages"', 'insert into "task_events"', 'commit'],
        );
        const insert = queries.find((q) => q.sql.startsWith('insert into "task_messages"'))!;
        assert.equal(insert.parameters.length, 4, 'one message row');
        const logged = queries.find((q) => q.sql.startsWith('insert into "task_events"'))!;
        assert.equal(logged.parameters.length, 4, 'one event row');
        assert.equal(reads.length, 0, 'served from the cache');
      }

      const loaded = (await store.load(task.id, ctx))!;
      assert.equal(loaded.history.length, 202);
      assert.equal(loaded.history.at(-1)?.messageId, answer.messageId);
      assert.equal(loaded.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.deepStrictEqual(loaded.status?.message, answer);
    });

    it('appends streamed artifact chunks as part rows, and replaces on a non-append update', async () => {
      const task = newTask();
      await store.create(task, ctx);
      const chunk = (text: string, append: boolean, name = '') =>
        artifactUpdate(task, artifact('answer', [textPart(text)], name), append);

      await store.append(task.id, ctx, [chunk('Hel', false)]);
      for (const piece of ['lo', ', ', 'world']) {
        queries.length = 0;
        await store.append(task.id, ctx, [chunk(piece, true)]);
        assert.equal(queries.filter((q) => /^delete|delete from/i.test(q.sql)).length, 0);
        if (backend.shared) {
          const [write] = queries.filter((q) => q.sql.startsWith('with upd as'));
          assert.match(write!.sql, /insert into artifact_parts/);
          const rows = write!.parameters.filter(Array.isArray) as unknown[][];
          assert.ok(
            rows.every((values) => values.length === 1),
            'only the new part is written',
          );
          continue;
        }
        const partInserts = queries.filter((q) => q.sql.startsWith('insert into "artifact_parts"'));
        assert.equal(partInserts.length, 1);
        assert.equal(partInserts[0]!.parameters.length, 4, 'only the new part is written');
      }
      queries.length = 0;
      await store.append(task.id, ctx, [chunk('!', true, 'Answer')]);
      assert.ok(
        queries.some((q) => q.sql.startsWith('update "task_artifacts"') || /update task_artifacts/.test(q.sql)),
        'a header change is written',
      );

      const parts = (t: Task | undefined) => t?.artifacts[0]?.parts.map((p) => p.content?.value);
      let loaded = await store.load(task.id, ctx);
      assert.deepStrictEqual(parts(loaded), ['Hel', 'lo', ', ', 'world', '!']);
      assert.equal(loaded?.artifacts[0]?.name, 'Answer');
      store.clearCache();
      assert.deepStrictEqual(parts(await store.load(task.id, ctx)), ['Hel', 'lo', ', ', 'world', '!']);

      await store.append(task.id, ctx, [chunk('Replaced', false)]);
      store.clearCache();
      loaded = await store.load(task.id, ctx);
      assert.deepStrictEqual(parts(loaded), ['Replaced']);
      assert.equal(loaded?.artifacts.length, 1);
      const rows = await db.selectFrom('artifact_parts').selectAll().where('task_id', '=', task.id).execute();
      assert.equal(rows.length, 1);
    });

    it('keeps artifacts and history when a later turn logs a fresh task event', async () => {
      const task = newTask();
      await store.create(task, ctx);
      await store.append(task.id, ctx, [
        artifactUpdate(task, artifact('a', [textPart('one'), textPart('two')])),
        statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, reply(task, 'done')),
      ]);

      // The next turn: its message joins the history, and the turn's task event follows.
      const user = message(task.id, task.contextId, Role.ROLE_USER, 'again');
      const fresh = (await store.load(task.id, ctx))!;
      queries.length = 0;
      await store.append(task.id, ctx, [
        taskEvent({
          ...fresh,
          history: [user],
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
        }),
      ]);
      assert.equal(
        queries.filter((q) => q.sql.startsWith('insert into "artifact_parts"')).length,
        0,
        'equal parts are not rewritten',
      );
      const loaded = (await store.load(task.id, ctx))!;
      assert.equal(loaded.status?.state, TaskState.TASK_STATE_WORKING);
      assert.deepStrictEqual(
        loaded.artifacts[0]?.parts.map((p) => p.content?.value),
        ['one', 'two'],
      );
      assert.deepStrictEqual(texts(loaded.history), ['hello', 'done', 'again']);
    });

    it('CMD-34: a follow-up under the id of an earlier message of the task is stored once, in its place', async () => {
      const task = newTask();
      await store.create(task, ctx);
      await store.append(task.id, ctx, [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, reply(task, 'done'))]);

      // The message as the client sent it (no context id) is stored first; the turn's task event
      // then carries it as the turn sees it (ids filled in).
      const sent = message(task.id, '', Role.ROLE_USER, 'a follow-up', task.history[0]!.messageId);
      await store.modify(task.id, ctx, () => ({
        history: [sent],
        events: [statusUpdate(task, TaskState.TASK_STATE_SUBMITTED)],
      }));
      const loaded = (await store.load(task.id, ctx))!;
      queries.length = 0;
      await store.append(task.id, ctx, [
        taskEvent({
          ...loaded,
          history: [{ ...sent, contextId: task.contextId }],
          artifacts: [],
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
        }),
      ]);
      assert.equal(
        queries.filter((q) => q.sql.startsWith('insert into "task_messages"')).length,
        0,
        'the message stored first is not stored again',
      );
      store.clearCache();
      assert.deepStrictEqual(texts((await store.load(task.id, ctx))!.history), ['hello', 'done', 'a follow-up']);
    });

    it("CMD-6: a status update's metadata is logged with it and stays out of the task's", async () => {
      const task = { ...newTask(), metadata: { a: 1 } };
      await store.create(task, ctx);
      const update = statusUpdate(task, TaskState.TASK_STATE_WORKING);
      (update.data as { metadata: Record<string, unknown> }).metadata = { b: 2 };
      const { logged } = await store.append(task.id, ctx, [update]);
      assert.deepStrictEqual(logged, [{ generation: 2, event: update }]);
      store.clearCache();
      assert.deepStrictEqual((await store.load(task.id, ctx))?.metadata, { a: 1 });
      await store.append(task.id, ctx, [taskEvent({ ...task, history: [], metadata: { c: 3 } })]);
      store.clearCache();
      assert.deepStrictEqual((await store.load(task.id, ctx))?.metadata, { a: 1, c: 3 }, "a task event's merges");
    });
  });
}
