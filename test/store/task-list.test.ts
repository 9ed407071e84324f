import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk';
import { InMemoryTaskStore } from '@a2a-js/sdk/server';
import { artifact, at, callContext, newTask, storeBackends, tempStore, textPart, type TempStore } from './helpers.js';

/**
 * `list` must answer exactly what the SDK's InMemoryTaskStore answers for the same tasks, so
 * every case runs against both stores and the answers are compared, on each backend.
 */

const alice = callContext('alice');
/** Room for a few of the small tasks below, not all: pages mix cached images and rows. */
const SOME_TASKS_BYTES = 16 * 1024;

function params(partial: Partial<ListTasksRequest>): ListTasksRequest {
  return {
    tenant: '',
    contextId: '',
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageToken: '',
    statusTimestampAfter: undefined,
    ...partial,
  };
}

function summary(response: ListTasksResponse) {
  return {
    ids: response.tasks.map((t) => t.id),
    artifacts: response.tasks.map((t) => t.artifacts.length),
    history: response.tasks.map((t) => t.history.length),
    nextPageToken: response.nextPageToken,
    pageSize: response.pageSize,
    totalSize: response.totalSize,
  };
}

for (const backend of storeBackends) {
  describe(`SqlTaskStore.list on ${backend.name}`, backend.needs, () => {
    let temp: TempStore;
    const memory = new InMemoryTaskStore();
    const tasks: Task[] = [];

    before(async () => {
      temp = await tempStore(backend, { cacheBytes: SOME_TASKS_BYTES });
      const contexts = ['ctx-a', 'ctx-b'];
      const states = [
        TaskState.TASK_STATE_WORKING,
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
      ];
      for (let i = 0; i < 9; i++) {
        // Two pairs share a timestamp, so the id breaks the tie.
        const task = newTask({
          id: `00000000-0000-4000-8000-00000000000${i}`,
          contextId: contexts[i % 2],
          state: states[i % 3],
          timestamp: at(i === 4 ? 3 : i === 7 ? 6 : i),
        });
        task.artifacts = [artifact(`art-${i}`, [textPart(`artifact ${i}`)])];
        tasks.push(task);
      }
      const untimed = newTask({ id: '00000000-0000-4000-8000-000000000009', contextId: 'ctx-a' });
      untimed.status = { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined };
      tasks.push(untimed);
      for (const task of tasks) {
        await temp.store.tasks.create(task, alice);
        await memory.save(task, alice);
      }
      const bobs = newTask({ contextId: 'ctx-a', state: TaskState.TASK_STATE_WORKING });
      await temp.store.tasks.create(bobs, callContext('bob'));
      await memory.save(bobs, callContext('bob'));
      const cached = temp.store.tasks.cacheUsage().tasks;
      assert.ok(cached > 0 && cached < tasks.length, `${cached} of ${tasks.length} tasks cached`);
    });
    after(async () => {
      await temp.dispose();
    });

    const cases: Array<[string, Partial<ListTasksRequest>]> = [
      ['everything', {}],
      ['one context', { contextId: 'ctx-a' }],
      ['one state', { status: TaskState.TASK_STATE_WORKING }],
      ['context and state', { contextId: 'ctx-b', status: TaskState.TASK_STATE_COMPLETED }],
      ['after a timestamp', { statusTimestampAfter: at(4) }],
      ['after a timestamp in another format', { statusTimestampAfter: '2025-01-01T13:00:04+01:00' }],
      ['with artifacts', { includeArtifacts: true, pageSize: 4 }],
      ['an unknown context', { contextId: 'nope' }],
      ['another tenant', { tenant: 'other' }],
    ];
    for (const [name, partial] of cases) {
      it(`matches InMemoryTaskStore: ${name}`, async () => {
        const context = partial.tenant ? callContext('alice', partial.tenant) : alice;
        const ours = await temp.store.tasks.list(params(partial), context);
        const theirs = await memory.list(params(partial), context);
        assert.deepStrictEqual(summary(ours), summary(theirs));
        assert.deepStrictEqual(ours.tasks, theirs.tasks);
      });
    }

    it('pages through every task with the same tokens as InMemoryTaskStore', async () => {
      for (const pageSize of [1, 2, 3, 10]) {
        let ourToken = '';
        let theirToken = '';
        const seen: string[] = [];
        do {
          const ours = await temp.store.tasks.list(params({ pageSize, pageToken: ourToken }), alice);
          const theirs = await memory.list(params({ pageSize, pageToken: theirToken }), alice);
          assert.deepStrictEqual(summary(ours), summary(theirs));
          seen.push(...ours.tasks.map((t) => t.id));
          ourToken = ours.nextPageToken;
          theirToken = theirs.nextPageToken;
        } while (ourToken);
        assert.equal(seen.length, tasks.length);
        assert.equal(new Set(seen).size, tasks.length);
      }
    });

    it('refuses a malformed page token like the SDK', async () => {
      const token = Buffer.from('no separator').toString('base64');
      await assert.rejects(temp.store.tasks.list(params({ pageToken: token }), alice), {
        code: 'params_invalid',
        message: /page token/i,
      });
      await assert.rejects(memory.list(params({ pageToken: token }), alice), /page token/i);
    });

    it('lists from the rows after a restart', async () => {
      const store = await temp.reopen({ cacheBytes: SOME_TASKS_BYTES });
      const ours = await store.tasks.list(params({ includeArtifacts: true, pageSize: 100 }), alice);
      const theirs = await memory.list(params({ includeArtifacts: true, pageSize: 100 }), alice);
      assert.deepStrictEqual(ours.tasks, theirs.tasks);
    });
  });
}
