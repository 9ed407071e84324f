/**
 * The store's one per-task queue: the task images' reads and saves, the hand-on of a task's
 * events and the reads of its feed each run one at a time per task, in call order.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedSerialQueue } from '../../src/store/keyed-serial-queue.js';

/** A promise settled from outside, to hold work running until the test lets it go. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('KeyedSerialQueue', () => {
  it('runs the work of one key one at a time, in call order, and other keys meanwhile', async () => {
    const queue = new KeyedSerialQueue();
    const log: string[] = [];
    const first = gate();
    const step = (name: string, wait?: Promise<void>) => async () => {
      log.push(`${name} starts`);
      await wait;
      log.push(`${name} ends`);
      return name;
    };
    const results = [queue.run('t1', step('a', first.opened)), queue.run('t1', step('b')), queue.run('t1', step('c'))];
    const other = await queue.run('t2', step('x'));
    assert.equal(other, 'x', 'another key does not wait for t1');
    assert.deepEqual(log, ['a starts', 'x starts', 'x ends']);
    first.open();
    assert.deepEqual(await Promise.all(results), ['a', 'b', 'c']);
    assert.deepEqual(log.slice(3), ['a ends', 'b starts', 'b ends', 'c starts', 'c ends']);
  });

  it("a failure is its caller's alone: the next work of the key runs", async () => {
    const queue = new KeyedSerialQueue();
    const failed = queue.run('t1', () => Promise.reject(new Error('boom')));
    const next = queue.run('t1', async () => 'ran');
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'ran');
  });

  it('holds only the keys with work queued or running, and says when all of it has settled', async () => {
    const queue = new KeyedSerialQueue();
    const held = gate();
    let done = false;
    const running = queue.run('t1', async () => {
      await held.opened;
      done = true;
    });
    const failing = assert.rejects(
      queue.run('t2', () => Promise.reject(new Error('ignored by settled'))),
      /ignored by settled/,
    );
    assert.deepEqual(queue.keys().sort(), ['t1', 't2']);
    const settled = queue.settled();
    held.open();
    await settled;
    assert.equal(done, true, 'settled waited for the running work');
    await running;
    await failing;
    await queue.settled();
    assert.deepEqual(queue.keys(), []);
  });
});
