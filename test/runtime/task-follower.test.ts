/**
 * `SubscribeToTask` (`followTask`): the task as stored, then its log after the snapshot's
 * generation, each event once, whoever wrote it; an idle task's stream stays open for the next
 * command reply (CMD-8).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { type ServerCallContext } from '@a2a-js/sdk/server';
import { agentMessage, statusUpdate } from '../../src/runtime/events.js';
import { followTask } from '../../src/runtime/task-follower.js';
import { textOf } from '../../src/wire.js';
import { callContext, message, newTask, tempStore } from '../store/helpers.js';
import { kinds, localEngine } from './engine-support.js';

describe('following a task', () => {
  it("CMD-8: SubscribeToTask follows the log after the snapshot's generation, each event once, and ends at a status that waits for input", async (t) => {
    const temp = await tempStore();
    t.after(() => temp.dispose());
    const alice = callContext('alice');
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.create(task, alice);
    const engine = localEngine(temp.store);
    const note = (text: string) =>
      statusUpdate(
        task.id,
        task.contextId,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        agentMessage(task.id, task.contextId, text),
      );
    const tasks = temp.store.tasks;
    const stream = followTask(
      {
        // A note is stored after following began and before the task is read: the snapshot holds it, and it is not sent again.
        read: async (id: string, context: ServerCallContext) => {
          await engine.post(note('before the snapshot'), alice);
          return tasks.read(id, context);
        },
        readLog: temp.store.tasks.readLog.bind(temp.store.tasks),
        feeds: temp.store.feeds,
        isBusy: (id) => engine.isBusy(id),
      },
      task.id,
      alice,
      { follow: 'live', refuseEnded: true },
    );
    const first = (await stream.next()).value;
    assert.equal(first?.payload?.$case, 'task');
    const snapshot = first?.payload?.value as Task;
    assert.equal(textOf(snapshot.status?.message?.parts), 'before the snapshot');
    const next = stream.next();
    await engine.post(note('a later reply'), alice, {
      message: message(task.id, task.contextId, Role.ROLE_USER, '/x'),
    });
    const got = (await next).value;
    assert.equal(got?.payload?.$case, 'statusUpdate');
    const update = got?.payload?.value as ReturnType<typeof note>;
    assert.equal(textOf(update.status?.message?.parts), 'a later reply');
    assert.equal((await stream.next()).done, true, 'and ends there, as a stream ends at a status that waits for input');
  });

  it('follows a turn from its snapshot to its final status, missing nothing, and refuses an ended task', async (t) => {
    const temp = await tempStore();
    t.after(() => temp.dispose());
    const alice = callContext('alice');
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.create(task, alice);
    const engine = localEngine(temp.store);
    const target = {
      read: temp.store.tasks.read.bind(temp.store.tasks),
      readLog: temp.store.tasks.readLog.bind(temp.store.tasks),
      feeds: temp.store.feeds,
      isBusy: (id: string) => engine.isBusy(id),
    };
    const stream = followTask(target, task.id, alice, { follow: 'live', refuseEnded: true });
    assert.equal((await stream.next()).value?.payload?.$case, 'task');
    const turn = await engine.startTurn(message(task.id, task.contextId, Role.ROLE_USER, 'go'), alice);
    void turn.events.return(undefined);
    const rest = [];
    for await (const item of stream) rest.push(item);
    assert.deepEqual(kinds(rest), ['task', 'WORKING', 'artifact', 'INPUT_REQUIRED']);
    await turn.done;

    await engine.cancel(task.id, alice);
    await assert.rejects(
      followTask(target, task.id, alice, { follow: 'live', refuseEnded: true }).next(),
      /terminal state/,
    );
  });
});
