import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Task } from '@a2a-js/sdk';
import { callContext, newTask, storeBackends, taskEvent, tempStore, type TempStore } from './helpers.js';

/**
 * The one write path (`TaskImages.commit`), on each backend: a write's `decide` may run more
 * than once, and only its last answer is stored, once (`Decide` says it must be pure).
 */

const alice = callContext('alice');

/** The task with its `count` one more: what the decides below answer. */
const counted = (task: Task) => ({
  events: [taskEvent({ ...task, history: [], metadata: { count: (task.metadata?.count as number) + 1 } })],
});

for (const backend of storeBackends) {
  describe(`one commit per write on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    beforeEach(async () => {
      temp = await tempStore(backend);
    });
    afterEach(async () => {
      await temp.dispose();
    });

    it('decide runs twice when another instance wrote first (shared), once alone; either way the write is stored once, as its last answer', async () => {
      const { store } = temp;
      const task = { ...newTask(), metadata: { count: 0 } };
      await store.tasks.create(task, alice); // kept here, at count 0
      // Shared, another instance writes the task: the kept image is outdated, and the write's
      // first decide (on that image) goes into a statement whose version guard refuses it.
      const other = backend.shared ? await temp.another() : store;
      await other.tasks.modify(task.id, alice, counted);
      const { version } = await store.db
        .selectFrom('tasks')
        .select('version')
        .where('id', '=', task.id)
        .executeTakeFirstOrThrow();

      const seen: number[] = [];
      const written = await store.tasks.modify(task.id, alice, (current) => {
        seen.push(current.metadata?.count as number);
        return counted(current);
      });

      // Alone (SQLite) the kept image is the truth: decided once. Shared: on the kept image, then on the row.
      assert.deepStrictEqual(seen, backend.shared ? [0, 1] : [1]);
      assert.deepStrictEqual(written?.task.metadata, { count: 2 });
      assert.deepStrictEqual(
        written?.logged.map((entry) => entry.generation),
        [3],
      );
      const log = await store.tasks.readLog(task.id, 0);
      assert.deepStrictEqual(
        log.map((entry) => [entry.generation, (entry.event.data as Task).metadata]),
        [
          [1, { count: 0 }],
          [2, { count: 1 }],
          [3, { count: 2 }],
        ],
        'one event logged per write',
      );
      const row = await store.db
        .selectFrom('tasks')
        .select(['version', 'generation', 'metadata_json'])
        .where('id', '=', task.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.version, version + 1, 'the row written once');
      assert.equal(Number(row.generation), 3);
      assert.deepStrictEqual(JSON.parse(row.metadata_json), { count: 2 });
      assert.deepStrictEqual((await other.tasks.load(task.id, alice))?.metadata, { count: 2 });
    });
  });
}
