import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { AgentEvent, ResultManager, ServerCallContext } from '@a2a-js/sdk/server';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/index.js';
import { SqlTaskStore } from '../../src/store/index.js';
import {
  artifact,
  message,
  newTask,
  recordingDatabase,
  storeBackends,
  textPart,
  type RecordedQuery,
} from './helpers.js';

/**
 * The store driven by the SDK's own ResultManager, the way the request handler drives it:
 * load, mutate the loaded task, save, after every event. Checks both the resulting task and
 * what each event wrote, on each backend: the writes are the same SQL on both.
 */

const ctx = new ServerCallContext();

function writes(queries: RecordedQuery[]): string[] {
  return queries.map((q) => q.sql).filter((sql) => !/^select/i.test(sql));
}

function statusUpdate(taskId: string, contextId: string, state: TaskState, reply: Message) {
  return AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: { state, message: reply, timestamp: new Date().toISOString() },
    metadata: undefined,
  });
}

for (const backend of storeBackends) {
  describe(`SqlTaskStore under the SDK ResultManager on ${backend.name}`, backend.needs, () => {
    let db: Kysely<Database>;
    let queries: RecordedQuery[];
    let dispose: () => Promise<void>;
    let store: SqlTaskStore;
    beforeEach(async () => {
      ({ db, queries, dispose } = await recordingDatabase(backend));
      store = new SqlTaskStore(db, { shared: backend.shared });
    });
    afterEach(async () => {
      await dispose();
    });

    it('appends one history row per status message, whatever the history length', async () => {
      const task = newTask();
      for (let i = 0; i < 200; i++) task.history.push(message(task.id, task.contextId, Role.ROLE_AGENT, `old ${i}`));
      await new ResultManager(store, ctx).processEvent(AgentEvent.task(task));
      queries.length = 0;

      const reply = message(task.id, task.contextId, Role.ROLE_AGENT, 'a command reply');
      await new ResultManager(store, ctx).processEvent(
        statusUpdate(task.id, task.contextId, TaskState.TASK_STATE_INPUT_REQUIRED, reply),
      );
      const sql = writes(queries);
      assert.deepStrictEqual(
        sql.map((s) => s.split(' ').slice(0, 3).join(' ')),
        ['begin', 'update "tasks" set', 'insert into "task_messages"', 'commit'],
      );
      const insert = queries.find((q) => q.sql.startsWith('insert into "task_messages"'))!;
      assert.equal(insert.parameters.length, 4, 'one message row');
      const reads = queries.filter((q) => /^select/i.test(q.sql)).map((q) => q.sql);
      if (backend.shared) {
        // The kept image is used, once its version is checked: for the load, and under the row lock
        // for the save, where a turn's fence is read in the same statement (no round trip of its own).
        assert.equal(reads.length, 2, reads.join('\n'));
        assert.match(reads[0]!, /^select "version" from "tasks" where "id" = \$1$/);
        assert.match(reads[1]!, /^select "version", "fence_epoch" from "tasks" where .* for update$/);
      } else {
        assert.equal(reads.length, 0, 'served from the cache');
      }

      const loaded = (await store.load(task.id, ctx))!;
      assert.equal(loaded.history.length, 202);
      assert.equal(loaded.history.at(-1)?.messageId, reply.messageId);
      assert.equal(loaded.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.deepStrictEqual(loaded.status?.message, reply);
    });

    it('appends streamed artifact chunks as part rows, and replaces on a non-append update', async () => {
      const task = newTask();
      const rm = new ResultManager(store, ctx);
      await rm.processEvent(AgentEvent.task(task));
      const chunk = (text: string, append: boolean, name = '') =>
        AgentEvent.artifactUpdate({
          taskId: task.id,
          contextId: task.contextId,
          artifact: artifact('answer', [textPart(text)], name),
          append,
          lastChunk: false,
          metadata: undefined,
        });

      await rm.processEvent(chunk('Hel', false));
      for (const piece of ['lo', ', ', 'world']) {
        queries.length = 0;
        await rm.processEvent(chunk(piece, true));
        const partInserts = queries.filter((q) => q.sql.startsWith('insert into "artifact_parts"'));
        assert.equal(partInserts.length, 1);
        assert.equal(partInserts[0]!.parameters.length, 4, 'only the new part is written');
        assert.equal(queries.filter((q) => /^delete/i.test(q.sql)).length, 0);
      }
      queries.length = 0;
      await rm.processEvent(chunk('!', true, 'Answer'));
      assert.ok(
        queries.some((q) => q.sql.startsWith('update "task_artifacts"')),
        'a header change is written',
      );

      const texts = (t: typeof task | undefined) => t?.artifacts[0]?.parts.map((p) => p.content?.value);
      let loaded = await store.load(task.id, ctx);
      assert.deepStrictEqual(texts(loaded), ['Hel', 'lo', ', ', 'world', '!']);
      assert.equal(loaded?.artifacts[0]?.name, 'Answer');
      store.clearCache();
      assert.deepStrictEqual(texts(await store.load(task.id, ctx)), ['Hel', 'lo', ', ', 'world', '!']);

      await rm.processEvent(chunk('Replaced', false));
      store.clearCache();
      loaded = await store.load(task.id, ctx);
      assert.deepStrictEqual(texts(loaded), ['Replaced']);
      assert.equal(loaded?.artifacts.length, 1);
      const rows = await db.selectFrom('artifact_parts').selectAll().where('task_id', '=', task.id).execute();
      assert.equal(rows.length, 1);
    });

    it('keeps artifacts and history when a later turn publishes a fresh task event', async () => {
      const task = newTask();
      const rm = new ResultManager(store, ctx);
      await rm.processEvent(AgentEvent.task(task));
      await rm.processEvent(
        AgentEvent.artifactUpdate({
          taskId: task.id,
          contextId: task.contextId,
          artifact: artifact('a', [textPart('one'), textPart('two')]),
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      await rm.processEvent(
        statusUpdate(
          task.id,
          task.contextId,
          TaskState.TASK_STATE_INPUT_REQUIRED,
          message(task.id, task.contextId, Role.ROLE_AGENT, 'done'),
        ),
      );

      // The next turn: the handler appended the user's message, the executor republishes the task.
      const next = new ResultManager(store, ctx);
      const user = message(task.id, task.contextId, Role.ROLE_USER, 'again');
      next.setContext(user);
      const fresh = (await store.load(task.id, ctx))!;
      queries.length = 0;
      await next.processEvent(
        AgentEvent.task({
          ...fresh,
          history: [],
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
        }),
      );
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
      assert.deepStrictEqual(
        loaded.history.map((m) => m.parts[0]?.content?.value),
        ['hello', 'done', 'again'],
      );
    });

    it('CMD-34: a follow-up under the id of an earlier message of the task is stored once, in its place', async () => {
      const task = newTask();
      await new ResultManager(store, ctx).processEvent(AgentEvent.task(task));
      const reply = message(task.id, task.contextId, Role.ROLE_AGENT, 'done');
      await new ResultManager(store, ctx).processEvent(
        statusUpdate(task.id, task.contextId, TaskState.TASK_STATE_INPUT_REQUIRED, reply),
      );

      // The handler appends the message as the client sent it (no context id) and saves; the
      // executor then republishes the task with the message as the turn sees it (ids filled in).
      const sent = message(task.id, '', Role.ROLE_USER, 'a follow-up', task.history[0]!.messageId);
      const loaded = (await store.load(task.id, ctx))!;
      await store.save({ ...loaded, history: [...loaded.history, sent] }, ctx);
      const next = new ResultManager(store, ctx);
      next.setContext(sent);
      queries.length = 0;
      await next.processEvent(
        AgentEvent.task({
          ...loaded,
          history: [{ ...sent, contextId: task.contextId }],
          artifacts: [],
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
        }),
      );
      assert.equal(
        queries.filter((q) => q.sql.startsWith('insert into "task_messages"')).length,
        0,
        'the message stored by the handler is not stored again',
      );
      store.clearCache();
      assert.deepStrictEqual(
        (await store.load(task.id, ctx))!.history.map((m) => m.parts[0]?.content?.value),
        ['hello', 'done', 'a follow-up'],
      );
    });

    it('merges event metadata into the task metadata', async () => {
      const task = newTask();
      const rm = new ResultManager(store, ctx);
      await rm.processEvent(AgentEvent.task({ ...task, metadata: { a: 1 } }));
      await rm.processEvent(
        AgentEvent.statusUpdate({
          taskId: task.id,
          contextId: task.contextId,
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
          metadata: { b: 2 },
        }),
      );
      store.clearCache();
      assert.deepStrictEqual((await store.load(task.id, ctx))?.metadata, { a: 1, b: 2 });
    });
  });
}
