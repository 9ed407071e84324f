/**
 * The tasks' queues of messages sent while a turn runs (`store/task-queue.ts`,
 * spec/while-busy-extension-v1.md), on both backends: order, the head for an interrupt, the
 * bound, a message id queued once, the user kept with the message, and two stores (instances)
 * adding at once.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role } from '@a2a-js/sdk';
import { callContext, message, newTask, storeBackends, tempStore, texts } from './helpers.js';
import type { QueuedMessage } from '../../src/ports.js';

const alice = callContext('alice');

function entry(taskId: string, contextId: string, text: string, messageId?: string): QueuedMessage {
  return {
    taskId,
    message: message(taskId, contextId, Role.ROLE_USER, text, messageId),
    tenant: 't1',
    owner: 'alice',
    authenticated: true,
    createdMs: 1,
  };
}

for (const backend of storeBackends) {
  describe(`while-busy: task queues on ${backend.name}`, backend.needs, () => {
    it('while-busy store: messages are added at the tail (enqueue) or the head (interrupt) and popped in that order, keeping their user', async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { queue, tasks } = temp.store;
      const task = newTask();
      await tasks.create(task, alice);
      const tail = { head: false, max: 16 };
      assert.deepEqual(await queue.add(entry(task.id, task.contextId, 'one'), tail), { kind: 'added', position: 1 });
      assert.deepEqual(await queue.add(entry(task.id, task.contextId, 'two'), tail), { kind: 'added', position: 2 });
      assert.deepEqual(await queue.add(entry(task.id, task.contextId, 'first'), { head: true, max: 16 }), {
        kind: 'added',
        position: 1,
      });
      assert.equal(await queue.size(task.id), 3);
      assert.deepEqual(texts((await queue.list(task.id)).map((q) => q.message)), ['first', 'one', 'two']);
      const head = await queue.pop(task.id);
      assert.deepEqual(texts([head!.message]), ['first']);
      assert.deepEqual([head!.tenant, head!.owner, head!.authenticated], ['t1', 'alice', true]);
      assert.deepEqual(await queue.tasks(), [task.id]);
      assert.deepEqual(texts([(await queue.pop(task.id))!.message, (await queue.pop(task.id))!.message]), [
        'one',
        'two',
      ]);
      assert.equal(await queue.pop(task.id), undefined);
      assert.deepEqual(await queue.tasks(), []);
    });

    it('while-busy store: a message id is queued once per task; the queue is bounded; drop empties it', async (t) => {
      const temp = await tempStore(backend);
      t.after(() => temp.dispose());
      const { queue, tasks } = temp.store;
      const task = newTask();
      await tasks.create(task, alice);
      const bound = { head: false, max: 2 };
      await queue.add(entry(task.id, task.contextId, 'one', 'm1'), bound);
      await queue.add(entry(task.id, task.contextId, 'two', 'm2'), bound);
      assert.deepEqual(await queue.add(entry(task.id, task.contextId, 'two again', 'm2'), bound), {
        kind: 'present',
        position: 2,
      });
      assert.deepEqual(await queue.add(entry(task.id, task.contextId, 'three', 'm3'), bound), {
        kind: 'full',
        size: 2,
      });
      assert.equal(await queue.position(task.id, 'm2'), 2);
      assert.equal(await queue.position(task.id, 'm3'), undefined);
      assert.equal(await queue.drop(task.id), 2);
      assert.equal(await queue.size(task.id), 0);
    });

    if (backend.shared) {
      it('while-busy store: two instances adding to one task at once get distinct places, none lost', async (t) => {
        const temp = await tempStore(backend);
        t.after(() => temp.dispose());
        const other = await temp.another();
        const task = newTask();
        await temp.store.tasks.create(task, alice);
        const bound = { head: false, max: 100 };
        const added = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? temp.store : other).queue.add(entry(task.id, task.contextId, `m${i}`), bound),
          ),
        );
        const places = added.map((a) => (a.kind === 'added' ? a.position : 0)).sort((x, y) => x - y);
        assert.deepEqual(
          places,
          Array.from({ length: 20 }, (_, i) => i + 1),
        );
        assert.equal(await temp.store.queue.size(task.id), 20);
      });
    }
  });
}
