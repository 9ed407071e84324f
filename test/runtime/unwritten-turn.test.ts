/**
 * Issue 22: a turn whose store fails under it (a PostgreSQL connection ended) never ends
 * half-written. Its stream failing to store an event, the turn is stopped and ends saying so, or
 * keeps the end it had; that final status is stored by `TrackedTurns`, tried again until written,
 * and the stream ends with it; the turn's lease, whose release failed too, is released on a retry.
 */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { HarnessError } from '../../src/errors.js';
import { TaskEngine, type EngineTaskStore } from '../../src/runtime/engine.js';
import { agentMessage, statusUpdate } from '../../src/runtime/events.js';
import { LocalCoordination } from '../../src/runtime/local-coordination.js';
import { TrackedTurns } from '../../src/runtime/tracked-turns.js';
import { STORE_INTERRUPTED_TEXT } from '../../src/runtime/turn-end.js';
import { callContext, newTask, tempStore, type TempStore } from '../store/helpers.js';

const lost = () =>
  new HarnessError('store_failed', 'The PostgreSQL connection failed before the statement was answered.');

/** A coordination whose first lease release fails, as a statement on an ended connection does. */
class FlakyLeases extends LocalCoordination {
  failures = 1;
  override releaseTurn(taskId: string): Promise<void> {
    if (this.failures-- > 0) return Promise.reject(lost());
    return super.releaseTurn(taskId);
  }
}

describe('a turn whose events could not be stored (issue 22)', () => {
  let temp: TempStore;
  let engine: TaskEngine;
  let coordination: FlakyLeases;
  let task: Task;
  const errors: string[] = [];
  const context = callContext('alice');

  beforeEach(async () => {
    temp = await tempStore();
    errors.length = 0;
    task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await temp.store.tasks.save(task, context);
    // The first write of the turn's end fails too.
    let modifyFailures = 1;
    const store: EngineTaskStore = {
      save: (t, c) => temp.store.tasks.save(t, c),
      load: (id, c) => temp.store.tasks.load(id, c),
      modify: (...args) => (modifyFailures-- > 0 ? Promise.reject(lost()) : temp.store.tasks.modify(...args)),
      awaitWritesUnderWay: () => Promise.resolve(),
    };
    coordination = new FlakyLeases();
    engine = new TaskEngine({ coordination, store, onError: (_error, what) => errors.push(what) });
  });
  afterEach(() => temp.dispose());

  /** A stream that sends the task, then fails as a save on an ended connection does, once `failing` resolves. */
  function turnStream(failing: Promise<void>) {
    const inner = {
      async *sendMessageStream(): AsyncGenerator<StreamResponse, void, undefined> {
        yield { payload: { $case: 'task', value: task } };
        await failing;
        throw new HarnessError('store_failed', `Task ${task.id} could not be saved.`);
      },
    } as unknown as A2ARequestHandler;
    const tracked = new TrackedTurns(inner, engine, (_error, what) => errors.push(what));
    return tracked.sendMessageStream(
      { tenant: '', message: undefined, configuration: undefined, metadata: {} },
      context,
    );
  }

  async function read(stream: AsyncGenerator<StreamResponse, void, undefined>): Promise<StreamResponse[]> {
    const items: StreamResponse[] = [];
    for await (const item of stream) items.push(item);
    return items;
  }

  it('a running turn is stopped, ends saying the database failed, and that end is stored on a retry; its lease is released on a retry', async () => {
    const turn = await engine.begin(task.id, context);
    // The executor's part: stopped, the turn ends as the store's failure ends it.
    turn.abort.signal.addEventListener('abort', () => {
      assert.equal(turn.abort.signal.reason?.name, 'TurnUnwritten');
      const message = agentMessage(task.id, task.contextId, STORE_INTERRUPTED_TEXT, 'store-failure');
      void engine.end(turn, statusUpdate(task.id, task.contextId, TaskState.TASK_STATE_INPUT_REQUIRED, message));
    });
    const items = await read(turnStream(Promise.resolve()));

    const last = items.at(-1)!.payload;
    assert.equal(last?.$case, 'statusUpdate');
    const ended = last?.$case === 'statusUpdate' ? last.value.status : undefined;
    assert.equal(ended?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const stored = (await temp.store.tasks.load(task.id, context))!;
    assert.equal(stored.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(stored.status?.message?.messageId, ended?.message?.messageId, 'the status the stream ended with');
    assert.ok(stored.history.some((m) => m.messageId === ended?.message?.messageId));
    assert.equal(await engine.isBusy(task.id), false, 'the lease was released');
    assert.deepEqual(errors, ['ending a turn (trying again)', 'storing the end of a turn (trying again)']);
  });

  it('a turn that ended before its final status failed to be stored keeps that status: it is stored as it was published', async () => {
    const turn = await engine.begin(task.id, context);
    let fail!: () => void;
    const reply = agentMessage(task.id, task.contextId, 'Hello there');
    reply.role = Role.ROLE_AGENT;
    const final = statusUpdate(task.id, task.contextId, TaskState.TASK_STATE_INPUT_REQUIRED, reply);
    const reading = read(turnStream(new Promise<void>((resolve) => (fail = resolve))));
    await engine.end(turn, final);
    fail();
    const items = await reading;

    const last = items.at(-1)!.payload;
    assert.equal(last?.$case === 'statusUpdate' && last.value.status?.message?.messageId, reply.messageId);
    const stored = (await temp.store.tasks.load(task.id, context))!;
    assert.equal(stored.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(stored.status?.message?.messageId, reply.messageId);
    assert.equal(turn.abort.signal.aborted, false, 'an ended turn is not stopped');
  });
});
