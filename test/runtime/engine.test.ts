/**
 * The task engine on one process (`LocalCoordination`) over the real store: one turn per task,
 * the state a posted reply leaves (CMD-9), and a drain that waits for the writes under way
 * rather than for time. Across instances the same engine runs on `PostgresCoordination`
 * (test/e2e/instances.test.ts).
 */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { Coordination } from '../../src/runtime/coordination.js';
import { statusUpdate } from '../../src/runtime/events.js';
import { TaskEngine } from '../../src/runtime/engine.js';
import { LocalCoordination } from '../../src/runtime/local-coordination.js';
import { callContext, message, newTask, tempStore, type TempStore } from '../store/helpers.js';
import { localEngine } from './engine-support.js';
import { poll } from '../support/wait.js';
import { hasErrorCode } from '../../src/errors.js';
import { TurnCanceled, TurnFenced, TurnStopped } from '../../src/runtime/turns.js';

describe('the task engine', () => {
  let temp: TempStore;
  let engine: TaskEngine;
  const errors: unknown[] = [];
  beforeEach(async () => {
    temp = await tempStore();
    errors.length = 0;
    engine = localEngine(temp.store.tasks, (error) => errors.push(error));
  });
  afterEach(() => temp.dispose());

  it('reserves a task for one turn at a time: a second reservation is refused until the turn ends', async () => {
    assert.equal(await engine.reserve('t1'), true);
    assert.equal(await engine.reserve('t1'), false, 'reserved');
    assert.equal(await engine.isBusy('t1'), true);
    const turn = await engine.begin('t1', undefined);
    assert.equal(await engine.reserve('t1'), false, 'running');
    await engine.end(turn);
    assert.equal(await engine.isBusy('t1'), false);
    assert.equal(await engine.reserve('t1'), true, 'free again');
    await engine.release('t1', callContext());
    assert.equal(await engine.isBusy('t1'), false, 'a reservation given back frees the task');
  });

  it('CMD-9: a reply posted while a turn holds the task says WORKING; a reservation given back unused sets the task back to waiting; on an idle task a reply keeps the state', async () => {
    const alice = callContext('alice');
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.save(task, alice);
    const command = message(task.id, task.contextId, Role.ROLE_USER, '/status');

    assert.equal(await engine.reserve(task.id), true);
    const during = statusUpdate(
      task.id,
      task.contextId,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      message(task.id, task.contextId, Role.ROLE_AGENT, 'a turn is running'),
    );
    const stored = await engine.post(during, alice, { message: command });
    assert.equal(during.status?.state, TaskState.TASK_STATE_WORKING);
    assert.deepEqual(
      stored.history.slice(-2).map((m) => m.messageId),
      [command.messageId, during.status!.message!.messageId],
      'the command, then its reply',
    );
    // The turn never begins (its message was refused): the task waits for input again, reply kept.
    await engine.release(task.id, alice);
    const released = await temp.store.tasks.load(task.id, alice);
    assert.equal(released?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(released?.status?.message?.messageId, during.status!.message!.messageId);

    const idle = statusUpdate(
      task.id,
      task.contextId,
      TaskState.TASK_STATE_WORKING,
      message(task.id, task.contextId, Role.ROLE_AGENT, 'idle'),
    );
    await engine.post(idle, alice);
    assert.equal(idle.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'an idle task keeps its state');
    const after = await temp.store.tasks.load(task.id, alice);
    assert.equal(
      after?.history.filter((m) => m.messageId === command.messageId).length,
      1,
      'the command is stored once',
    );
  });

  it('posts to every bus of the task on this instance, in the order the posts were stored', async () => {
    const alice = callContext('alice');
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.save(task, alice);
    const bus = engine.buses.createOrGetByTaskId(task.id, alice);
    const seen: string[] = [];
    bus.on('event', (event) => {
      if (event.kind === 'statusUpdate') seen.push(event.data.status!.message!.messageId);
    });
    const updates = [1, 2, 3, 4, 5].map((n) =>
      statusUpdate(
        task.id,
        task.contextId,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        message(task.id, task.contextId, Role.ROLE_AGENT, `note ${n}`),
      ),
    );
    await Promise.all(updates.map((update) => engine.post(update, alice)));
    const stored = await temp.store.tasks.load(task.id, alice);
    const storedOrder = stored!.history.slice(-5).map((m) => m.messageId);
    assert.deepEqual(seen, storedOrder);
  });

  it('CMD-13: a message or note posted again with a stored id is kept once, at its first place (the engine appends without scanning the history)', async () => {
    const alice = callContext('alice');
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.save(task, alice);
    const command = message(task.id, task.contextId, Role.ROLE_USER, '/status');
    const reply = message(task.id, task.contextId, Role.ROLE_AGENT, 'State: waiting');
    await engine.post(statusUpdate(task.id, task.contextId, TaskState.TASK_STATE_INPUT_REQUIRED, reply), alice, {
      message: command,
    });
    // A resend: copies of the same command and reply, as decoded from a request and the reply log.
    const again = statusUpdate(task.id, task.contextId, TaskState.TASK_STATE_INPUT_REQUIRED, structuredClone(reply));
    const stored = await engine.post(again, alice, { message: structuredClone(command) });
    const ids = [task.history[0]!.messageId, command.messageId, reply.messageId];
    assert.deepEqual(
      stored.history.map((m) => m.messageId),
      ids,
    );
    await engine.settle(task.id, alice, (current) => ({
      taskId: task.id,
      contextId: task.contextId,
      status: { ...current.status!, state: TaskState.TASK_STATE_INPUT_REQUIRED },
      metadata: {},
    }));
    assert.deepEqual(
      (await temp.store.tasks.load(task.id, alice))!.history.map((m) => m.messageId),
      ids,
      'a settle keeping the status message adds it no second time',
    );
  });

  it('drain ends running turns as interrupted and resolves only once the work it tracks (turn streams) has ended', async () => {
    assert.equal(await engine.reserve('t2'), true);
    const turn = await engine.begin('t2', undefined);
    let finish!: () => void;
    void engine.track(new Promise<void>((resolve) => (finish = resolve)));
    let drained = false;
    const draining = engine.drain().then(() => (drained = true));
    assert.equal(turn.abort.signal.aborted, true, 'the turn is told to stop');
    assert.equal(turn.abort.signal.reason?.name, 'TurnInterrupted');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(drained, false, 'the stream is still being stored');
    finish();
    await draining;
    assert.equal(await engine.reserve('t3'), false, 'no turn starts once draining');
  });

  it('drain gives up waiting after its grace, and says what it left: the turn and the write that never ended', async () => {
    assert.equal(await engine.reserve('t5'), true);
    const turn = await engine.begin('t5', undefined);
    void engine.track(new Promise<void>(() => {})); // a write the database never answers
    let closed = false;
    const close = engine.coordination.close.bind(engine.coordination);
    engine.coordination.close = () => close().then(() => void (closed = true));
    const left = await engine.drain(1);
    assert.equal(turn.abort.signal.reason?.name, 'TurnInterrupted');
    assert.deepEqual(left, { turns: 1, writes: 1 });
    await poll('the coordination closed, without waiting for the write', () => closed);
  });

  it('a drain with nothing left says so', async () => {
    assert.deepEqual(await engine.drain(1), { turns: 0, writes: 0 });
  });

  it('CancelTask on an idle task: the engine stores CANCELED, and every bus here sees it once', async () => {
    const alice = callContext('alice');
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.save(task, alice);
    const seen: TaskState[] = [];
    engine.buses.createOrGetByTaskId(task.id, alice).on('event', (event) => {
      if (event.kind === 'statusUpdate') seen.push(event.data.status!.state);
    });
    await engine.cancel(task.id, alice);
    assert.equal((await temp.store.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_CANCELED);
    assert.deepEqual(seen, [TaskState.TASK_STATE_CANCELED]);
    // A2A 1.0.1, 3.3.2: a task canceled already is not cancelable, and is left as it is.
    await assert.rejects(engine.cancel(task.id, alice), (error) => hasErrorCode(error, 'task_not_cancelable'));
    assert.deepEqual(seen, [TaskState.TASK_STATE_CANCELED], 'a task canceled already is left as it is');
  });

  it('CancelTask refuses a task the caller cannot see, and one that ended otherwise; neither is touched', async () => {
    const alice = callContext('alice');
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.save(task, alice);
    await assert.rejects(engine.cancel(task.id, callContext('bob')), (error) => hasErrorCode(error, 'task_not_found'));
    const done = newTask({ state: TaskState.TASK_STATE_COMPLETED });
    await temp.store.tasks.save(done, alice);
    await assert.rejects(engine.cancel(done.id, alice), (error) => hasErrorCode(error, 'task_not_cancelable'));
    assert.equal((await temp.store.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal((await temp.store.tasks.load(done.id, alice))?.status?.state, TaskState.TASK_STATE_COMPLETED);
  });

  it('CancelTask on a turn running here aborts it, and its CANCELED end is stored and published by the engine, once, after its lease went back', async () => {
    const alice = callContext('alice');
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await temp.store.tasks.save(task, alice);
    const seen: TaskState[] = [];
    engine.buses.createOrGetByTaskId(task.id, alice).on('event', (event) => {
      if (event.kind === 'statusUpdate') seen.push(event.data.status!.state);
    });
    assert.equal(await engine.reserve(task.id), true);
    const turn = await engine.begin(task.id, alice);
    const canceling = engine.cancel(task.id, alice);
    await poll('the turn is aborted', () => turn.abort.signal.aborted);
    assert.equal(turn.abort.signal.reason?.name, 'TurnCanceled');
    // The executor's part: its final status, which the engine stores itself for a canceled turn.
    const final = statusUpdate(
      task.id,
      task.contextId,
      TaskState.TASK_STATE_CANCELED,
      message(task.id, task.contextId, Role.ROLE_AGENT, 'The turn was canceled.'),
    );
    assert.equal(await engine.end(turn, final), true, 'published by the engine, not by the turn');
    await canceling;
    assert.deepEqual(seen, [TaskState.TASK_STATE_CANCELED]);
    const stored = await temp.store.tasks.load(task.id, alice);
    assert.equal(stored?.status?.state, TaskState.TASK_STATE_CANCELED);
    assert.equal(stored?.history.filter((m) => m.messageId === final.status!.message!.messageId).length, 1);
    assert.equal(await engine.isBusy(task.id), false);
  });

  it('abortTurn aborts only the turn it names, and a stop asked before begin does not replace a cancel', async () => {
    assert.equal(await engine.reserve('t6'), true);
    engine.abortTurn('t6', new TurnCanceled());
    engine.abortTurn('t6', new TurnStopped());
    const turn = await engine.begin('t6', undefined);
    assert.equal(turn.abort.signal.reason?.name, 'TurnCanceled');
    await engine.end(turn);
    assert.equal(await engine.reserve('t6'), true);
    const next = await engine.begin('t6', undefined);
    engine.abortTurn('t6', new TurnFenced(), turn);
    assert.equal(next.abort.signal.aborted, false, 'an earlier turn named: the running one goes on');
    engine.abortTurn('t6', new TurnFenced(), next);
    assert.equal(next.abort.signal.reason?.name, 'TurnFenced');
  });

  it('a cancel asked for a turn that is reserved but not begun aborts it as it begins', async () => {
    assert.equal(await engine.reserve('t4'), true);
    await engine.coordination.requestCancel('t4');
    const turn = await engine.begin('t4', undefined);
    assert.equal(turn.abort.signal.aborted, true);
    assert.equal(errors.length, 0);
  });
});

describe('the task engine across instances', () => {
  it('asks again for a cancel that the instance running the turn did not hear, until the turn ends', async () => {
    const local = new LocalCoordination();
    const followers = new Map<string, (event: AgentExecutionEvent) => void>();
    let requests = 0;
    // The turn runs "elsewhere"; the first request is lost, the second one ends the turn there.
    const coordination: Coordination = Object.assign(Object.create(local) as LocalCoordination, {
      turnHeld: () => Promise.resolve(true),
      follow: (taskId: string, deliver: (event: AgentExecutionEvent) => void) => {
        followers.set(taskId, deliver);
        return Promise.resolve(() => followers.delete(taskId));
      },
      requestCancel: (taskId: string) => {
        requests += 1;
        if (requests === 2)
          followers.get(taskId)?.(AgentEvent.statusUpdate(statusUpdate(taskId, 'ctx', TaskState.TASK_STATE_CANCELED)));
        return Promise.resolve();
      },
    });
    const engine = new TaskEngine({
      coordination,
      store: {
        save: () => Promise.reject(new Error('unused')),
        load: async (id) => ({ ...newTask({ state: TaskState.TASK_STATE_WORKING }), id }),
        // Read after the turn ended there: stored CANCELED by that instance, nothing left to write here.
        modify: async (id, _context, change) =>
          change({ ...newTask({ state: TaskState.TASK_STATE_CANCELED }), id }) as Promise<undefined>,
        awaitWritesUnderWay: () => Promise.resolve(),
      },
      onError: () => {},
    });
    await engine.cancel('t-elsewhere', callContext());
    assert.equal(requests, 2);
  });
});
