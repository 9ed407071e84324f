import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import {
  artifact,
  artifactUpdate,
  at,
  callContext,
  message,
  newTask,
  reply,
  statusUpdate,
  storeBackends,
  taskEvent,
  tempStore,
  textPart,
  texts,
  type TempStore,
} from './helpers.js';

/**
 * SqlTaskStore on its own, on each backend: round trips, copies, scoping, several writers,
 * restarts. Tasks are created whole (`create`) and changed by events (`append`, `modify`).
 */

function fullTask(): Task {
  const task = newTask({ state: TaskState.TASK_STATE_WORKING, timestamp: at(5) });
  const reply = message(task.id, task.contextId, Role.ROLE_AGENT, 'working on it');
  reply.metadata = { command: 'status', nested: { list: [1, 'two', null, { deep: true }] } };
  reply.extensions = ['https://example.com/ext'];
  reply.referenceTaskIds = ['00000000-0000-4000-8000-000000000001'];
  task.history.push(reply);
  task.status = { state: TaskState.TASK_STATE_WORKING, message: reply, timestamp: at(5) };
  task.artifacts = [
    {
      artifactId: 'report',
      name: 'Report',
      description: 'all the parts',
      parts: [
        textPart('line one'),
        {
          content: { $case: 'data', value: { rows: [1, 2, 3], ok: true } },
          mediaType: 'application/json',
          filename: '',
          metadata: { kind: 'table' },
        },
        {
          content: { $case: 'raw', value: Buffer.from([0, 1, 2, 250, 255]) },
          mediaType: 'application/octet-stream',
          filename: 'bytes.bin',
          metadata: {},
        },
        {
          content: { $case: 'url', value: 'https://example.com/x.png' },
          mediaType: 'image/png',
          filename: 'x.png',
          metadata: {},
        },
      ],
      metadata: { source: 'test' },
      extensions: [],
    },
  ];
  task.metadata = { model: 'local:tiny', counts: { a: 1 } };
  return task;
}

for (const backend of storeBackends) {
  describe(`SqlTaskStore on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    const alice = callContext('alice');
    beforeEach(async () => {
      temp = await tempStore(backend);
    });
    afterEach(async () => {
      await temp.dispose();
    });

    it('round-trips a full task, enums, parts and metadata included, across a restart', async () => {
      const task = fullTask();
      const created = await temp.store.tasks.create(task, alice);
      assert.deepStrictEqual(created.task, task);
      assert.deepStrictEqual(await temp.store.tasks.load(task.id, alice), task);
      const reopened = await temp.reopen();
      const loaded = await reopened.tasks.load(task.id, alice);
      assert.deepStrictEqual(loaded, task);
      assert.equal(loaded?.status?.state, TaskState.TASK_STATE_WORKING);
      assert.equal(loaded?.history[1]?.role, Role.ROLE_AGENT);
      assert.ok(Buffer.isBuffer(loaded?.artifacts[0]?.parts[2]?.content?.value));
    });

    it('round-trips a task built by events, across a restart', async () => {
      const task = newTask({ state: TaskState.TASK_STATE_SUBMITTED, timestamp: at(1) });
      await temp.store.tasks.create(task, alice);
      const full = fullTask();
      const answer = reply(task, 'done');
      const { task: appended } = await temp.store.tasks.append(task.id, alice, [
        statusUpdate(task, TaskState.TASK_STATE_WORKING, undefined, at(2)),
        artifactUpdate(task, full.artifacts[0]!),
        artifactUpdate(task, artifact('report', [textPart('one more')]), true),
        taskEvent({ ...task, history: [], metadata: full.metadata, status: task.status }),
        statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, answer, at(3)),
      ]);
      assert.deepStrictEqual(appended, await temp.store.tasks.load(task.id, alice));
      const loaded = (await (await temp.reopen()).tasks.load(task.id, alice))!;
      assert.deepStrictEqual(loaded, appended);
      assert.deepStrictEqual(loaded.status, {
        state: TaskState.TASK_STATE_INPUT_REQUIRED,
        message: answer,
        timestamp: at(3),
      });
      assert.deepStrictEqual(texts(loaded.history), ['hello', 'done']);
      assert.deepStrictEqual(loaded.artifacts, [
        { ...full.artifacts[0]!, parts: [...full.artifacts[0]!.parts, textPart('one more')] },
      ]);
      assert.deepStrictEqual(loaded.metadata, full.metadata);
    });

    it('always sets artifacts, history and metadata', async () => {
      const task = newTask();
      (task as { metadata: unknown }).metadata = undefined;
      await temp.store.tasks.create(task, alice);
      const loaded = await temp.store.tasks.load(task.id, alice);
      assert.deepStrictEqual(loaded?.artifacts, []);
      assert.equal(loaded?.history.length, 1);
      assert.deepStrictEqual(loaded?.metadata, {});
    });

    it('hands out copies: changing a loaded task changes nothing stored', async () => {
      const task = fullTask();
      const created = await temp.store.tasks.create(task, alice);
      const loaded = (await temp.store.tasks.load(task.id, alice))!;
      for (const copy of [loaded, created.task]) {
        copy.history.push(message(task.id, task.contextId, Role.ROLE_USER, 'not saved'));
        copy.artifacts[0]!.parts.push(textPart('not saved'));
        copy.artifacts[0]!.name = 'changed';
        copy.artifacts.push(artifact('other', [textPart('x')]));
        copy.status!.state = TaskState.TASK_STATE_FAILED;
        copy.metadata!.extra = 1;
      }
      assert.deepStrictEqual(await temp.store.tasks.load(task.id, alice), task);
      const appended = await temp.store.tasks.append(task.id, alice, [
        statusUpdate(task, TaskState.TASK_STATE_WORKING),
      ]);
      appended.task.history.length = 0;
      (appended.logged[0]!.event.data as { status: { state: TaskState } }).status.state = TaskState.TASK_STATE_FAILED;
      assert.equal((await temp.store.tasks.load(task.id, alice))?.history.length, task.history.length);
      assert.equal((await temp.store.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_WORKING);
    });

    it('keeps the caller of create and append from changing the stored task afterwards', async () => {
      const task = fullTask();
      await temp.store.tasks.create(task, alice);
      task.history[0]!.parts.push(textPart('changed after save'));
      (task.artifacts[0]!.parts[1]!.content!.value as { rows: number[] }).rows.push(4);
      let loaded = (await temp.store.tasks.load(task.id, alice))!;
      assert.equal(loaded.history[0]!.parts.length, 1);
      assert.deepStrictEqual((loaded.artifacts[0]!.parts[1]!.content!.value as { rows: number[] }).rows, [1, 2, 3]);

      const added = artifact('added', [textPart('as appended')]);
      const answer = reply(task, 'as appended');
      await temp.store.tasks.append(task.id, alice, [
        artifactUpdate(task, added),
        statusUpdate(task, TaskState.TASK_STATE_WORKING, answer),
      ]);
      added.parts.push(textPart('changed after append'));
      answer.parts.push(textPart('changed after append'));
      loaded = (await temp.store.tasks.load(task.id, alice))!;
      assert.equal(loaded.artifacts.at(-1)!.parts.length, 1);
      assert.equal(loaded.history.at(-1)!.parts.length, 1);
    });

    it('scopes tasks by owner and tenant, like the SDK stores', async () => {
      const task = newTask();
      await temp.store.tasks.create(task, alice);
      assert.equal(await temp.store.tasks.load(task.id, callContext('bob')), undefined);
      assert.equal(await temp.store.tasks.read(task.id, callContext('bob')), undefined);
      assert.equal(await temp.store.tasks.load(task.id, callContext()), undefined);
      assert.equal(await temp.store.tasks.load(task.id, callContext('alice', 'tenant-b')), undefined);
      assert.deepStrictEqual(await temp.store.tasks.scopeOfTask(task.id), { tenant: '', owner: 'alice' });
      assert.equal(await temp.store.tasks.scopeOfTask('no-such-task'), undefined);
      await assert.rejects(temp.store.tasks.create(task, callContext('bob')), {
        code: 'store_failed',
        message: /another tenant or owner/,
      });
      await assert.rejects(temp.store.tasks.create(task, alice), { code: 'store_failed', message: /stored already/ });
      await assert.rejects(
        temp.store.tasks.append(task.id, callContext('bob'), [statusUpdate(task, TaskState.TASK_STATE_WORKING)]),
        { code: 'task_not_found' },
      );
      await temp.reopen();
      assert.equal(await temp.store.tasks.load(task.id, callContext('bob')), undefined);
      assert.equal((await temp.store.tasks.load(task.id, alice))?.id, task.id);
      assert.equal((await temp.store.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_SUBMITTED);
    });

    it('never loses history when two writers change the same task at once', async () => {
      const task = newTask();
      await temp.store.tasks.create(task, alice);
      const fromTurn = reply(task, 'from the turn');
      const fromCommand = reply(task, 'from the command');
      await Promise.all([
        temp.store.tasks.append(task.id, alice, [statusUpdate(task, TaskState.TASK_STATE_WORKING, fromTurn)]),
        temp.store.tasks.modify(task.id, alice, () => ({
          events: [statusUpdate(task, TaskState.TASK_STATE_WORKING, fromCommand)],
        })),
      ]);
      const ids = (t: Task | undefined) => t?.history.map((m) => m.messageId);
      const expected = [task.history[0]!.messageId, fromTurn.messageId, fromCommand.messageId];
      assert.deepStrictEqual(ids(await temp.store.tasks.load(task.id, alice)), expected);
      // A task event whose history lacks stored messages deletes none of them.
      await temp.store.tasks.append(task.id, alice, [taskEvent({ ...task, history: [] })]);
      assert.deepStrictEqual(ids(await temp.store.tasks.load(task.id, alice)), expected);
      assert.deepStrictEqual(ids(await (await temp.reopen()).tasks.load(task.id, alice)), expected);
    });

    it('CMD-34: a message whose id an earlier one of the task has, with other content, is kept in its place; writing it again stores nothing twice', async () => {
      const task = newTask();
      const id = task.history[0]!.messageId;
      await temp.store.tasks.create(task, alice);
      const answer = reply(task, 'hi there');
      const followUp = message(task.id, task.contextId, Role.ROLE_USER, 'a follow-up', id);
      const again = message(task.id, task.contextId, Role.ROLE_USER, 'one more', id);
      const note = statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED);
      await temp.store.tasks.append(task.id, alice, [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, answer)]);
      // As a command is stored: its message joins the history, with its reply's status.
      await temp.store.tasks.modify(task.id, alice, () => ({ history: [followUp], events: [note] }));
      // As a turn's task event: its message again, with the context filled in, and as is.
      await temp.store.tasks.append(task.id, alice, [
        taskEvent({ ...task, history: [{ ...followUp, contextId: '' }] }),
      ]);
      await temp.store.tasks.append(task.id, alice, [taskEvent({ ...task, history: [{ ...followUp }] })]);
      // Two new messages with the id in one write; the one already stored, twice.
      await temp.store.tasks.modify(task.id, alice, () => ({
        history: [followUp, again, structuredClone(again), task.history[0]!],
        events: [note],
      }));
      const expected = ['hello', 'hi there', 'a follow-up', 'one more'];
      assert.deepStrictEqual(texts((await temp.store.tasks.load(task.id, alice))?.history), expected);
      // The whole history written again, as loaded and as a deep copy: nothing added.
      let loaded = (await temp.store.tasks.load(task.id, alice))!;
      await temp.store.tasks.append(task.id, alice, [taskEvent(loaded)]);
      await temp.store.tasks.modify(task.id, alice, (current) => ({
        history: structuredClone(current.history),
        events: [note],
      }));
      assert.deepStrictEqual(texts((await temp.store.tasks.load(task.id, alice))?.history), expected);

      const reopened = await temp.reopen();
      loaded = (await reopened.tasks.load(task.id, alice))!;
      assert.deepStrictEqual(texts(loaded.history), expected, 'in order after a restart');
      assert.deepStrictEqual(
        loaded.history.map((m) => m.messageId),
        [id, answer.messageId, id, id],
      );
      await reopened.tasks.append(task.id, alice, [taskEvent(structuredClone(loaded))]);
      await reopened.tasks.modify(task.id, alice, () => ({
        history: [again, followUp, task.history[0]!],
        events: [note],
      }));
      assert.deepStrictEqual(texts((await (await temp.reopen()).tasks.load(task.id, alice))?.history), expected);
    });

    it('replaces the status with each logged one, in write order', async () => {
      const task = newTask({ state: TaskState.TASK_STATE_WORKING, timestamp: at(10) });
      await temp.store.tasks.create(task, alice);
      // A status built earlier but written later still wins: writes arrive in event order.
      const late = reply(task, 'final reply');
      await temp.store.tasks.append(task.id, alice, [
        statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, late, at(9)),
      ]);
      let loaded = (await temp.store.tasks.load(task.id, alice))!;
      assert.equal(loaded.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(loaded.status?.timestamp, at(9));
      assert.equal(loaded.history.at(-1)?.messageId, late.messageId);
      await temp.store.tasks.append(task.id, alice, [
        {
          kind: 'statusUpdate',
          data: {
            taskId: task.id,
            contextId: task.contextId,
            status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
            metadata: {},
          },
        },
      ]);
      loaded = (await (await temp.reopen()).tasks.load(task.id, alice))!;
      assert.equal(loaded.status?.state, TaskState.TASK_STATE_WORKING);
      assert.equal(loaded.status?.timestamp, undefined);
      assert.equal(loaded.status?.message, undefined);
      assert.equal(loaded.history.at(-1)?.messageId, late.messageId, 'a status without a message adds none');
    });

    it('stores a command message and its reply in one write without touching the rest of the task', async () => {
      const task = fullTask();
      await temp.store.tasks.create(task, alice);
      const note = message(task.id, task.contextId, Role.ROLE_USER, '/status');
      const answer = reply(task, 'all well');
      const edit = () => ({
        history: [note],
        events: [statusUpdate(task, TaskState.TASK_STATE_WORKING, answer, at(6))],
      });
      const written = await temp.store.tasks.modify(task.id, alice, edit);
      assert.equal(written?.logged.length, 1);
      const loaded = await (await temp.reopen()).tasks.load(task.id, alice);
      const expected = {
        ...task,
        history: [...task.history, note, answer],
        status: { state: TaskState.TASK_STATE_WORKING, message: answer, timestamp: at(6) },
      };
      assert.deepStrictEqual(loaded, expected);
      // A resend of the command and its reply: each message is stored once.
      await temp.store.tasks.modify(task.id, alice, edit);
      assert.deepStrictEqual(await temp.store.tasks.load(task.id, alice), expected);
      await assert.rejects(temp.store.tasks.modify(task.id, callContext('bob'), edit), {
        code: 'task_not_found',
        message: /not found/,
      });
    });

    it("a turn's final message joins the history right after the turn's own last one, ahead of what was posted meanwhile; rows, image and another store agree, and writing it again stores nothing twice", async () => {
      const task = newTask({ state: TaskState.TASK_STATE_WORKING });
      const asked = message(task.id, task.contextId, Role.ROLE_USER, 'the question');
      task.history = [asked];
      await temp.store.tasks.create(task, alice);
      // Posted while the turn runs: a command exchange, then a note.
      const command = message(task.id, task.contextId, Role.ROLE_USER, '/model large');
      await temp.store.tasks.modify(task.id, alice, () => ({
        history: [command],
        events: [statusUpdate(task, TaskState.TASK_STATE_WORKING, reply(task, 'now large'))],
      }));
      await temp.store.tasks.append(task.id, alice, [
        statusUpdate(task, TaskState.TASK_STATE_WORKING, reply(task, 'a note')),
      ]);
      const end = [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, reply(task, 'the answer'))];
      const written = await temp.store.tasks.append(task.id, alice, end, { replyAfter: asked.messageId });
      const expected = ['the question', 'the answer', '/model large', 'now large', 'a note'];
      assert.deepEqual(texts(written.task.history), expected, 'as written');
      assert.deepEqual(texts((await temp.store.tasks.load(task.id, alice))?.history), expected, 'the kept image');
      const weighed = temp.store.tasks.cacheUsage().bytes;
      temp.store.tasks.clearCache();
      await temp.store.tasks.load(task.id, alice);
      assert.equal(weighed, temp.store.tasks.cacheUsage().bytes, "the image's weight, as if read from the rows");
      const other = await temp.another();
      assert.deepEqual(texts((await other.tasks.load(task.id, alice))?.history), expected, 'read from the rows');

      // Written again (a retried end whose first write did commit): nothing is stored twice.
      await temp.store.tasks.append(task.id, alice, end, { replyAfter: asked.messageId });
      await temp.store.tasks.append(task.id, alice, [
        statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, reply(task, 'later')),
      ]);
      const after = [...expected, 'later'];
      assert.deepEqual(texts((await temp.store.tasks.load(task.id, alice))?.history), after);
      assert.deepEqual(
        texts((await (await temp.reopen()).tasks.load(task.id, alice))?.history),
        after,
        'after a restart',
      );
    });

    it('modify reads, decides and writes as one step: the change sees every write before it, and returns what was saved', async () => {
      const task = { ...newTask(), metadata: { count: 0 } };
      await temp.store.tasks.create(task, alice);
      // Concurrent changes of one task, each on what the one before saved: none is lost.
      const saved = await Promise.all(
        Array.from({ length: 10 }, () =>
          temp.store.tasks.modify(task.id, alice, async (current) => {
            await Promise.resolve();
            return {
              events: [
                taskEvent({ ...current, history: [], metadata: { count: (current.metadata?.count as number) + 1 } }),
              ],
            };
          }),
        ),
      );
      assert.deepStrictEqual(
        saved.map((t) => t?.task.metadata?.count),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      assert.deepStrictEqual(
        saved.map((t) => t?.logged.map((l) => l.generation)),
        Array.from({ length: 10 }, (_, i) => [i + 2]),
      );
      saved[9]!.task.history.push(message(task.id, task.contextId, Role.ROLE_USER, 'not saved')); // a copy
      assert.deepStrictEqual(await (await temp.reopen()).tasks.load(task.id, alice), {
        ...task,
        metadata: { count: 10 },
      });

      const answer = reply(task, 'reply');
      const replied = await temp.store.tasks.modify(task.id, alice, (current) => {
        current.history.length = 0; // the task handed to decide is a copy: changing it writes nothing
        return { events: [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, answer, at(20))] };
      });
      assert.deepStrictEqual(replied?.task, await temp.store.tasks.load(task.id, alice));
      assert.equal(replied?.task.history.length, 2);

      assert.equal(await temp.store.tasks.modify(task.id, alice, () => undefined), undefined);
      await assert.rejects(
        temp.store.tasks.modify(task.id, alice, () => Promise.reject(new Error('no'))),
        /no/,
      );
      await assert.rejects(
        temp.store.tasks.modify(task.id, callContext('bob'), () => ({ events: [] })),
        { code: 'task_not_found', message: /Task not found/ },
      );
      await assert.rejects(
        temp.store.tasks.append('no-such-task', alice, [statusUpdate(task, TaskState.TASK_STATE_WORKING)]),
        { code: 'task_not_found', message: /Task not found/ },
      );
      assert.deepStrictEqual(await temp.store.tasks.load(task.id, alice), replied?.task);
    });

    it('serves every task correctly with a tiny cache or none', async () => {
      for (const cacheBytes of [0, 8 * 1024]) {
        const store = await temp.reopen({ cacheBytes });
        const tasks = Array.from({ length: 5 }, () => newTask());
        for (const task of tasks) await store.tasks.create(task, alice);
        for (const task of tasks) {
          await store.tasks.append(task.id, alice, [
            statusUpdate(task, TaskState.TASK_STATE_WORKING, reply(task, 'more')),
          ]);
        }
        for (const task of tasks) {
          const snapshot = (await store.tasks.read(task.id, alice))!;
          assert.equal(snapshot.task.history.length, 2);
          assert.equal(snapshot.generation, 2);
        }
      }
    });
  });
}
