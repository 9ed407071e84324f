import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import {
  artifact,
  at,
  callContext,
  message,
  newTask,
  storeBackends,
  tempStore,
  textPart,
  type TempStore,
} from './helpers.js';

/** SqlTaskStore on its own, on each backend: round trips, copies, scoping, several writers, restarts. */

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
      await temp.store.tasks.save(task, alice);
      assert.deepStrictEqual(await temp.store.tasks.load(task.id, alice), task);
      const reopened = await temp.reopen();
      const loaded = await reopened.tasks.load(task.id, alice);
      assert.deepStrictEqual(loaded, task);
      assert.equal(loaded?.status?.state, TaskState.TASK_STATE_WORKING);
      assert.equal(loaded?.history[1]?.role, Role.ROLE_AGENT);
      assert.ok(Buffer.isBuffer(loaded?.artifacts[0]?.parts[2]?.content?.value));
    });

    it('always sets artifacts, history and metadata', async () => {
      const task = newTask();
      (task as { metadata: unknown }).metadata = undefined;
      await temp.store.tasks.save(task, alice);
      const loaded = await temp.store.tasks.load(task.id, alice);
      assert.deepStrictEqual(loaded?.artifacts, []);
      assert.equal(loaded?.history.length, 1);
      assert.deepStrictEqual(loaded?.metadata, {});
    });

    it('hands out copies: changing a loaded task changes nothing stored', async () => {
      const task = fullTask();
      await temp.store.tasks.save(task, alice);
      const loaded = (await temp.store.tasks.load(task.id, alice))!;
      loaded.history.push(message(task.id, task.contextId, Role.ROLE_USER, 'not saved'));
      loaded.artifacts[0]!.parts.push(textPart('not saved'));
      loaded.artifacts[0]!.name = 'changed';
      loaded.artifacts.push(artifact('other', [textPart('x')]));
      loaded.status!.state = TaskState.TASK_STATE_FAILED;
      loaded.metadata!.extra = 1;
      assert.deepStrictEqual(await temp.store.tasks.load(task.id, alice), task);
    });

    it('keeps the caller of save from changing the stored task afterwards', async () => {
      const task = fullTask();
      await temp.store.tasks.save(task, alice);
      task.history[0]!.parts.push(textPart('changed after save'));
      (task.artifacts[0]!.parts[1]!.content!.value as { rows: number[] }).rows.push(4);
      const loaded = (await temp.store.tasks.load(task.id, alice))!;
      assert.equal(loaded.history[0]!.parts.length, 1);
      assert.deepStrictEqual((loaded.artifacts[0]!.parts[1]!.content!.value as { rows: number[] }).rows, [1, 2, 3]);
    });

    it('scopes tasks by owner and tenant, like the SDK stores', async () => {
      const task = newTask();
      await temp.store.tasks.save(task, alice);
      assert.equal(await temp.store.tasks.load(task.id, callContext('bob')), undefined);
      assert.equal(await temp.store.tasks.load(task.id, callContext()), undefined);
      assert.equal(await temp.store.tasks.load(task.id, callContext('alice', 'tenant-b')), undefined);
      assert.equal((await temp.store.tasks.loadUnscoped(task.id))?.id, task.id);
      assert.deepStrictEqual(await temp.store.tasks.scopeOfTask(task.id), { tenant: '', owner: 'alice' });
      await assert.rejects(temp.store.tasks.save(task, callContext('bob')), /another tenant or owner/);
      await temp.reopen();
      assert.equal(await temp.store.tasks.load(task.id, callContext('bob')), undefined);
      assert.equal((await temp.store.tasks.load(task.id, alice))?.id, task.id);
    });

    it('never loses history when two writers save the same task', async () => {
      const task = newTask();
      await temp.store.tasks.save(task, alice);
      const turn = (await temp.store.tasks.load(task.id, alice))!;
      const command = (await temp.store.tasks.load(task.id, alice))!;
      const fromTurn = message(task.id, task.contextId, Role.ROLE_AGENT, 'from the turn');
      const fromCommand = message(task.id, task.contextId, Role.ROLE_AGENT, 'from the command');
      turn.history = [...turn.history, fromTurn];
      command.history = [...command.history, fromCommand];
      await Promise.all([temp.store.tasks.save(turn, alice), temp.store.tasks.save(command, alice)]);
      const ids = (t: Task | undefined) => t?.history.map((m) => m.messageId);
      const expected = [task.history[0]!.messageId, fromTurn.messageId, fromCommand.messageId];
      assert.deepStrictEqual(ids(await temp.store.tasks.load(task.id, alice)), expected);
      // A save whose history lacks stored messages deletes none of them.
      await temp.store.tasks.save({ ...task, history: [] }, alice);
      assert.deepStrictEqual(ids(await temp.store.tasks.load(task.id, alice)), expected);
      assert.deepStrictEqual(ids(await (await temp.reopen()).tasks.load(task.id, alice)), expected);
    });

    it('CMD-34: a message whose id an earlier one of the task has, with other content, is kept in its place; saving again stores nothing twice', async () => {
      const task = newTask();
      const id = task.history[0]!.messageId;
      await temp.store.tasks.save(task, alice);
      const reply = message(task.id, task.contextId, Role.ROLE_AGENT, 'hi there');
      const followUp = message(task.id, task.contextId, Role.ROLE_USER, 'a follow-up', id);
      const again = message(task.id, task.contextId, Role.ROLE_USER, 'one more', id);
      let loaded = (await temp.store.tasks.load(task.id, alice))!;
      await temp.store.tasks.save({ ...loaded, history: [...loaded.history, reply] }, alice);
      loaded = (await temp.store.tasks.load(task.id, alice))!;
      // As the SDK's handler saves a follow-up: the loaded history and the message appended.
      await temp.store.tasks.save({ ...loaded, history: [...loaded.history, followUp] }, alice);
      // As a turn's first save: only its message, with the task and context filled in.
      await temp.store.tasks.save({ ...task, history: [{ ...followUp, contextId: '' }] }, alice);
      await temp.store.tasks.save({ ...task, history: [{ ...followUp }] }, alice);
      // Two new messages with the id in one save; the one already stored, twice.
      await temp.store.tasks.save(
        { ...task, history: [followUp, again, structuredClone(again), task.history[0]!] },
        alice,
      );
      const texts = (t: Task | undefined) => t?.history.map((m) => m.parts[0]?.content?.value);
      const expected = ['hello', 'hi there', 'a follow-up', 'one more'];
      assert.deepStrictEqual(texts(await temp.store.tasks.load(task.id, alice)), expected);
      // The whole task saved again, as loaded and as a deep copy (what the SDK clones): nothing added.
      loaded = (await temp.store.tasks.load(task.id, alice))!;
      await temp.store.tasks.save(loaded, alice);
      await temp.store.tasks.save(structuredClone(loaded), alice);
      await temp.store.tasks.appendMessage(task.id, structuredClone(followUp), alice);
      assert.deepStrictEqual(texts(await temp.store.tasks.load(task.id, alice)), expected);

      const reopened = await temp.reopen();
      loaded = (await reopened.tasks.load(task.id, alice))!;
      assert.deepStrictEqual(texts(loaded), expected, 'in order after a restart');
      assert.deepStrictEqual(
        loaded.history.map((m) => m.messageId),
        [id, reply.messageId, id, id],
      );
      await reopened.tasks.save(structuredClone(loaded), alice);
      await reopened.tasks.save({ ...task, history: [again, followUp, task.history[0]!] }, alice);
      assert.deepStrictEqual(texts(await (await temp.reopen()).tasks.load(task.id, alice)), expected);
    });

    it('replaces the status with each saved one, in save order', async () => {
      const task = newTask({ state: TaskState.TASK_STATE_WORKING, timestamp: at(10) });
      await temp.store.tasks.save(task, alice);
      // A status built earlier but saved later still wins: saves arrive in event order.
      const late = message(task.id, task.contextId, Role.ROLE_AGENT, 'final reply');
      await temp.store.tasks.save(
        {
          ...task,
          status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: late, timestamp: at(9) },
          history: [...task.history, late],
        },
        alice,
      );
      let loaded = (await temp.store.tasks.load(task.id, alice))!;
      assert.equal(loaded.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(loaded.status?.timestamp, at(9));
      assert.equal(loaded.history.at(-1)?.messageId, late.messageId);
      await temp.store.tasks.save(
        { ...task, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined } },
        alice,
      );
      loaded = (await (await temp.reopen()).tasks.load(task.id, alice))!;
      assert.equal(loaded.status?.state, TaskState.TASK_STATE_WORKING);
      assert.equal(loaded.status?.timestamp, undefined);
    });

    it('appends a single message without touching the rest of the task', async () => {
      const task = fullTask();
      await temp.store.tasks.save(task, alice);
      const note = message(task.id, task.contextId, Role.ROLE_USER, '/status');
      await temp.store.tasks.appendMessage(task.id, note, alice);
      await temp.store.tasks.appendMessage(task.id, note, alice);
      const loaded = await (await temp.reopen()).tasks.load(task.id, alice);
      assert.deepStrictEqual(loaded, { ...task, history: [...task.history, note] });
      await assert.rejects(temp.store.tasks.appendMessage(task.id, note, callContext('bob')), {
        code: 'task_not_found',
        message: /not found/,
      });
    });

    it('modify reads, decides and writes as one step: the change sees every write before it, and returns what was saved', async () => {
      const task = { ...newTask(), metadata: { count: 0 } };
      await temp.store.tasks.save(task, alice);
      // Concurrent changes of one task, each on what the one before saved: none is lost.
      const saved = await Promise.all(
        Array.from({ length: 10 }, () =>
          temp.store.tasks.modify(task.id, alice, async (current) => {
            await Promise.resolve();
            return { ...current, metadata: { count: (current.metadata?.count as number) + 1 } };
          }),
        ),
      );
      assert.deepStrictEqual(
        saved.map((t) => t?.metadata?.count),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      saved[9]!.history.push(message(task.id, task.contextId, Role.ROLE_USER, 'not saved')); // a copy
      assert.deepStrictEqual(await (await temp.reopen()).tasks.load(task.id, alice), {
        ...task,
        metadata: { count: 10 },
      });

      const reply = message(task.id, task.contextId, Role.ROLE_AGENT, 'reply');
      const replied = await temp.store.tasks.modify(task.id, alice, (current) => {
        current.history.push(reply);
        current.status = { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: reply, timestamp: at(20) };
        return current;
      });
      assert.deepStrictEqual(replied, await temp.store.tasks.load(task.id, alice));
      assert.equal(replied?.history.length, 2);

      assert.equal(await temp.store.tasks.modify(task.id, alice, () => undefined), undefined);
      await assert.rejects(
        temp.store.tasks.modify(task.id, alice, () => Promise.reject(new Error('no'))),
        /no/,
      );
      await assert.rejects(
        temp.store.tasks.modify(task.id, alice, (current) => ({ ...current, id: 'other' })),
        { code: 'store_failed' },
      );
      await assert.rejects(
        temp.store.tasks.modify(task.id, callContext('bob'), (current) => current),
        { code: 'task_not_found', message: /Task not found/ },
      );
      assert.deepStrictEqual(await temp.store.tasks.load(task.id, alice), replied);
    });

    it('serves every task correctly with a tiny cache or none', async () => {
      for (const cacheBytes of [0, 8 * 1024]) {
        const store = await temp.reopen({ cacheBytes });
        const tasks = Array.from({ length: 5 }, () => newTask());
        for (const task of tasks) await store.tasks.save(task, alice);
        for (const task of tasks) {
          const loaded = (await store.tasks.load(task.id, alice))!;
          loaded.history.push(message(task.id, task.contextId, Role.ROLE_AGENT, 'more'));
          await store.tasks.save(loaded, alice);
        }
        for (const task of tasks) assert.equal((await store.tasks.load(task.id, alice))?.history.length, 2);
      }
    });
  });
}
