import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { byteBoundedCache } from '../../src/store/byte-bounded-cache.js';
import { SqlTaskStateStore, SqlTaskStore } from '../../src/store/index.js';
import {
  artifact,
  artifactUpdate,
  callContext,
  linkSubtask,
  message,
  newTask,
  recordingDatabase,
  reply,
  statusUpdate,
  storeBackends,
  taskEvent,
  tempStore,
  textPart,
  type TempStore,
} from './helpers.js';

/**
 * The store's memory: caches bounded by the bytes they hold (not by a count, which let 500
 * tasks of 4 MB fill the heap), and task images kept per scope, so that another user's task
 * reads exactly like one that does not exist.
 */

describe('byteBoundedCache', () => {
  /** A cache whose values say what they weigh: `size` bytes besides the key and the entry. */
  const cache = (maxBytes: number) => byteBoundedCache<{ name: string; size: number }>(maxBytes, (value) => value.size);
  const entry = (name: string, size: number) => ({ name, size });

  it('keeps its entries within the bound, dropping the least recently used first', () => {
    const lru = cache(1000);
    for (const name of ['a', 'b', 'c']) lru.set(name, entry(name, 200));
    assert.equal(lru.get('a')?.name, 'a'); // a is now the most recently used: b goes first
    lru.set('d', entry('d', 200));
    assert.ok(lru.calculatedSize <= 1000, `${lru.calculatedSize} bytes held`);
    assert.equal(lru.peek('b'), undefined);
    assert.deepEqual(
      ['a', 'c', 'd'].map((key) => lru.peek(key)?.name),
      ['a', 'c', 'd'],
    );
  });

  it('weighs an entry again when it is put again, and drops it when it alone passes the bound', () => {
    const lru = cache(1000);
    const a = entry('a', 100);
    lru.set('a', a);
    lru.set('b', entry('b', 100));
    const held = lru.calculatedSize;
    a.size = 500; // grew in place, then put again
    lru.set('a', a);
    assert.equal(lru.calculatedSize, held + 400);
    lru.set('a', entry('a', 5000));
    assert.equal(lru.has('a'), false, 'the old, lighter entry does not stay behind');
    assert.equal(lru.peek('b')?.name, 'b', 'nothing else is dropped for an entry that is not kept');
    lru.delete('b');
    assert.equal(lru.calculatedSize, 0);
  });

  it('weighs the key and the entry besides the value', () => {
    const lru = cache(10_000);
    lru.set('k', entry('x', 0));
    const withShortKey = lru.calculatedSize;
    lru.clear();
    lru.set('a longer key', entry('x', 0));
    assert.ok(withShortKey > 0, 'an empty value still weighs its entry');
    assert.equal(lru.calculatedSize - withShortKey, 2 * ('a longer key'.length - 'k'.length));
  });

  it('keeps nothing with a bound of 0, and refuses a bound that is not a whole number', () => {
    const lru = cache(0);
    lru.set('a', entry('a', 0));
    assert.equal(lru.size, 0);
    assert.throws(() => cache(-1), RangeError);
    assert.throws(() => cache(1.5), RangeError);
    assert.throws(() => cache(Number.NaN), RangeError);
  });
});

for (const backend of storeBackends) {
  describe(`SqlTaskStore cache bound on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    const alice = callContext('alice');
    beforeEach(async () => {
      temp = await tempStore(backend);
    });
    afterEach(async () => {
      await temp.dispose();
    });

    it('holds no more than its bytes however much is stored, and serves every task', async () => {
      const store = (await temp.reopen({ cacheBytes: 1_000_000 })).tasks;
      const maxBytes = store.cacheUsage().maxBytes;
      const tasks: Task[] = [];
      for (let i = 0; i < 40; i++) {
        const task = newTask({ history: [] });
        task.history.push(message(task.id, task.contextId, Role.ROLE_USER, `${i} ${'x'.repeat(100_000)}`));
        await store.create(task, alice);
        const answer = message(task.id, task.contextId, Role.ROLE_AGENT, 'y'.repeat(50_000));
        await store.append(task.id, alice, [statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, answer)]);
        tasks.push(task);
        const usage = store.cacheUsage();
        assert.ok(usage.bytes <= maxBytes, `after ${i + 1} tasks the cache holds ${usage.bytes} of ${maxBytes} bytes`);
      }
      // 40 tasks of 200,000+ characters each: at most a handful fit.
      const usage = store.cacheUsage();
      assert.ok(usage.tasks > 0 && usage.tasks <= 5, `${usage.tasks} tasks cached`);
      for (const [i, task] of tasks.entries()) {
        const loaded = await store.load(task.id, alice);
        assert.equal(loaded?.history[0]?.parts[0]?.content?.value, `${i} ${'x'.repeat(100_000)}`);
        assert.equal(loaded?.history.length, 2);
      }
      assert.ok(store.cacheUsage().bytes <= maxBytes);
    });

    it('never keeps a task larger than the whole bound, and still stores and serves it', async () => {
      const store = (await temp.reopen({ cacheBytes: 500_000 })).tasks;
      const small = newTask();
      await store.create(small, alice);
      assert.equal(store.cacheUsage().tasks, 1);
      const large = newTask({ history: [] });
      large.history.push(message(large.id, large.contextId, Role.ROLE_USER, 'z'.repeat(600_000)));
      await store.create(large, alice);
      await store.load(large.id, alice);
      assert.equal(store.cacheUsage().tasks, 1, 'only the small task is kept');
      assert.equal((await store.load(small.id, alice))?.id, small.id);
      await store.append(large.id, alice, [
        statusUpdate(large, TaskState.TASK_STATE_INPUT_REQUIRED, reply(large, 'and more')),
      ]);
      assert.deepEqual(
        (await store.load(large.id, alice))?.history.map((m) => m.parts[0]?.content?.value.toString().length),
        [600_000, 8],
      );
      assert.equal(store.cacheUsage().tasks, 1);
    });

    it('weighs an image the same whether built by writes or read from the rows', async () => {
      const store = temp.store.tasks;
      const task = newTask({ state: TaskState.TASK_STATE_WORKING });
      await store.create(task, alice);
      await store.append(task.id, alice, [artifactUpdate(task, artifact('answer', [textPart('Hel')]))]);
      await store.append(task.id, alice, [
        artifactUpdate(task, artifact('answer', [textPart('lo, world')], 'Answer'), true),
        artifactUpdate(task, artifact('other', [textPart('x'.repeat(1000))])),
      ]);
      await store.append(task.id, alice, [
        taskEvent({
          ...task,
          history: [],
          status: task.status,
          metadata: { model: 'builtin:echo', note: 'n'.repeat(300) },
        }),
        artifactUpdate(task, artifact('other', [textPart('shorter')])),
        statusUpdate(task, TaskState.TASK_STATE_INPUT_REQUIRED, reply(task, 'done '.repeat(100))),
      ]);
      const built = store.cacheUsage().bytes;
      store.clearCache();
      await store.load(task.id, alice);
      assert.equal(store.cacheUsage().bytes, built);
      // The estimate covers at least the text the image holds.
      assert.ok(built > 'done '.repeat(100).length * 2 + 300 + 1000);
    });
  });
}

/** SQLite only: it compares the SQL sent, and a shared store (PostgreSQL) also checks each kept image's version. */
describe('SqlTaskStore scope', () => {
  it("reads another user's task id exactly like an id never stored: one read in the caller's scope, never the cached image", async () => {
    const { db, queries, dispose } = await recordingDatabase();
    try {
      const store = new SqlTaskStore(db);
      const alice = callContext('alice');
      const bob = callContext('bob');
      const task = newTask();
      await store.create(task, alice);
      queries.length = 0;
      assert.equal((await store.load(task.id, alice))?.id, task.id);
      assert.equal(queries.length, 0, "alice's own task comes from the cache");

      const foreign = await store.load(task.id, bob);
      const foreignQueries = queries.splice(0);
      const missing = await store.load(randomUUID(), bob);
      const missingQueries = queries.splice(0);
      assert.equal(foreign, undefined);
      assert.equal(missing, undefined);
      assert.ok(foreignQueries.length > 0, 'a database read, not the cached image');
      assert.deepEqual(
        foreignQueries.map((q) => q.sql),
        missingQueries.map((q) => q.sql),
      );
      assert.deepEqual(foreignQueries[0]!.parameters.slice(1), ['', 'bob'], "the read is made in bob's scope");
      assert.equal(store.cacheUsage().tasks, 1, 'nothing is cached for bob');

      // The same for the other scoped paths that reach the store.
      const note = message(task.id, task.contextId, Role.ROLE_USER, 'hi');
      const writes = [
        (id: string) => store.modify(id, bob, () => ({ history: [note], events: [] })),
        (id: string) => store.append(id, bob, [statusUpdate(task, TaskState.TASK_STATE_WORKING, note)]),
      ];
      for (const write of writes) {
        await assert.rejects(write(task.id), { code: 'task_not_found' });
        const foreignWrite = queries.splice(0);
        await assert.rejects(write(randomUUID()), { code: 'task_not_found' });
        assert.deepEqual(
          foreignWrite.map((q) => q.sql),
          queries.splice(0).map((q) => q.sql),
        );
      }
      assert.deepEqual(await store.load(task.id, alice), task, "alice's task is untouched");
    } finally {
      await dispose();
    }
  });
});

for (const backend of storeBackends) {
  describe(`SqlTaskStateStore cache bound on ${backend.name}`, backend.needs, () => {
    const CONTEXT = { tenant: '', owner: 'alice', contextId: 'ctx' };
    it('answers from the database whatever its bound, a bound of 0 included', async () => {
      const temp = await tempStore(backend);
      try {
        for (const cacheBytes of [0, 300]) {
          const state = new SqlTaskStateStore(temp.store.db, { cacheBytes });
          const parent = randomUUID();
          const children = Array.from({ length: 20 }, () => randomUUID());
          for (const child of children) await linkSubtask(state, temp.store.db, parent, child);
          await state.setTaskModel(parent, CONTEXT, 'builtin:echo');
          await state.addUsage(parent, { model: 'builtin:echo', inputTokens: 3, outputTokens: 4 });
          for (let round = 0; round < 2; round++) {
            assert.deepEqual(await state.getLinks(parent), { parent: undefined, children });
            assert.deepEqual(await state.getLinks(children[5]!), { parent, children: [] });
            assert.equal(await state.getTaskModel(parent), 'builtin:echo');
            assert.equal(await state.getContextModel(CONTEXT), 'builtin:echo');
            assert.deepEqual(await state.getUsage(parent), [
              { model: 'builtin:echo', inputTokens: 3, outputTokens: 4 },
            ]);
          }
        }
      } finally {
        await temp.dispose();
      }
    });
  });
}

/** SQLite only: it counts the SQL sent. */
describe('SqlTaskStateStore memory', () => {
  it('keeps what it read, "no model chosen" included, and reads nothing again until a write', async () => {
    const { db, queries, dispose } = await recordingDatabase();
    try {
      const state = new SqlTaskStateStore(db);
      const context = { tenant: '', owner: 'alice', contextId: 'ctx' };
      const reads = () => Promise.all([state.getTaskModel('t1'), state.getContextModel(context), state.getUsage('t1')]);
      assert.deepEqual(await reads(), [undefined, undefined, []]);
      assert.equal(queries.splice(0).length, 3, 'one query each');
      assert.deepEqual(await reads(), [undefined, undefined, []]);
      assert.equal(queries.length, 0, 'all from memory');
      await state.setTaskModel('t1', context, 'builtin:echo');
      queries.length = 0;
      assert.deepEqual(await reads(), ['builtin:echo', 'builtin:echo', []]);
      assert.equal(queries.length, 0, 'the written choice is kept as written');
    } finally {
      await dispose();
    }
  });
});
