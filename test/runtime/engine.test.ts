/**
 * The task engine on one process (`LocalCoordination`) over the real store and its log
 * readers, running turns with a small scripted executor: one turn per task, every event of a
 * turn in the task's log and its stream read from there (issue 23), the state a posted reply
 * leaves (CMD-9), cancel, and a drain that waits for the writes under way rather than for time.
 * Across instances the same engine runs on `PostgresCoordination` (test/e2e/instances.test.ts).
 */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';
import { statusUpdate } from '../../src/runtime/events.js';
import { TaskEngine } from '../../src/runtime/engine.js';
import { LocalCoordination } from '../../src/coordination/local-coordination.js';
import { asStreamResponse } from '../../src/runtime/turn/turn-stream.js';
import { TurnCanceled, TurnFenced, TurnStopped } from '../../src/runtime/turn/turns.js';
import type { Turn } from '../../src/engine-ports.js';
import { readLogAfter } from '../../src/store/task-log.js';
import { callContext, message, newTask, tempStore, type TempStore } from '../store/helpers.js';
import { gate, kinds, localEngine, readAll, scripted, userMessage } from './engine-support.js';
import { poll } from '../support/wait.js';
import { hasErrorCode } from '../../src/errors.js';
import type { Coordination, LoggedEvent } from '../../src/ports.js';

const alice = callContext('alice');

describe('the task engine', () => {
  let temp: TempStore;
  let engine: TaskEngine;
  /** Opened to let the turns held at it go on. */
  let held: ReturnType<typeof gate>;
  /** The turns started, as the executor was handed them. */
  const turns: Turn[] = [];
  const errors: unknown[] = [];
  beforeEach(async () => {
    temp = await tempStore();
    errors.length = 0;
    turns.length = 0;
    held = gate();
    engine = localEngine(
      temp.store,
      scripted({
        started: (_request, turn) => turns.push(turn),
        // A turn waits at the gate until it is opened or the turn is aborted.
        hold: (_request, turn) =>
          new Promise<void>((resolve) => {
            void held.opened.then(resolve);
            turn.abort.signal.addEventListener('abort', () => resolve(), { once: true });
          }),
      }),
      { onError: (error) => errors.push(error) },
    );
  });
  afterEach(() => temp.dispose());

  /** The task's log, from its creation. */
  const logOf = (taskId: string): Promise<LoggedEvent[]> => readLogAfter(temp.store.db, taskId, 0);

  async function idleTask(state = TaskState.TASK_STATE_INPUT_REQUIRED) {
    const task = newTask({ state });
    await temp.store.tasks.create(task, alice);
    return task;
  }

  it('one turn per task: a second startTurn is refused turn_in_progress until the first has ended', async () => {
    const task = await idleTask();
    const first = await engine.startTurn(userMessage('one', task), alice);
    assert.equal(await engine.isBusy(task.id), true);
    assert.equal(engine.runsHere(task.id), true);
    await assert.rejects(engine.startTurn(userMessage('two', task), alice), (error) =>
      hasErrorCode(error, 'turn_in_progress'),
    );
    held.open();
    await readAll(first.events);
    await first.done;
    assert.equal(await engine.isBusy(task.id), false);
    const again = await engine.startTurn(userMessage('three', task), alice);
    await readAll(again.events);
  });

  it('startTurn refuses a task the caller cannot see, and one that has ended, storing nothing', async () => {
    const task = await idleTask();
    await assert.rejects(engine.startTurn(userMessage('hi', task), callContext('bob')), (error) =>
      hasErrorCode(error, 'task_not_found'),
    );
    const done = await idleTask(TaskState.TASK_STATE_COMPLETED);
    await assert.rejects(engine.startTurn(userMessage('hi', done), alice), (error) =>
      hasErrorCode(error, 'task_ended'),
    );
    assert.deepEqual(kinds(asItems(await logOf(task.id))), ['task']);
    assert.deepEqual(kinds(asItems(await logOf(done.id))), ['task']);
    assert.equal(await engine.isBusy(task.id), false);
  });

  it("issue 23: every event of a turn is in the log with consecutive generations; the turn's stream is exactly the log from its task event to its final status", async () => {
    held.open();
    const turn = await engine.startTurn(userMessage('hello'), alice);
    const items = await readAll(turn.events);
    await turn.done;
    const log = await logOf(turn.taskId);
    assert.deepEqual(
      log.map((entry) => entry.generation),
      log.map((_, i) => i + 1),
      'generations 1, 2, 3...: one per event, none missing',
    );
    assert.deepEqual(kinds(items), ['task', 'WORKING', 'artifact', 'INPUT_REQUIRED']);
    assert.deepEqual(plain(items), asItems(log), 'the stream is the log');
    const stored = (await temp.store.tasks.read(turn.taskId, alice))!;
    assert.equal(stored.generation, log.length, "the task's generation is its log's last");
    assert.equal(stored.task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);

    // A continued task: its turn's stream starts at its own task event.
    const task = stored.task;
    const next = await engine.startTurn(userMessage('again', task), alice);
    const nextItems = await readAll(next.events);
    const after = await readLogAfter(temp.store.db, task.id, stored.generation);
    assert.deepEqual(
      after.map((entry) => entry.generation),
      after.map((_, i) => stored.generation + i + 1),
    );
    assert.deepEqual(plain(nextItems), asItems(after));
  });

  it("issue 23: CMD-8, CMD-9: a command reply posted during a turn is in the log between the turn's events and reaches its stream once, with state WORKING", async () => {
    const task = await idleTask();
    const turn = await engine.startTurn(userMessage('work', task), alice);
    const items: StreamResponse[] = [];
    const reading = (async () => {
      for await (const item of turn.events) items.push(item);
    })();
    await poll('the turn is WORKING', () => kinds(items).includes('WORKING'));
    const command = message(task.id, task.contextId, Role.ROLE_USER, '/status');
    const reply = statusUpdate(
      task.id,
      task.contextId,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      message(task.id, task.contextId, Role.ROLE_AGENT, 'a turn is running'),
    );
    const stored = await engine.post(reply, alice, { message: command });
    assert.equal(reply.status?.state, TaskState.TASK_STATE_WORKING, 'CMD-9: the reply says WORKING');
    assert.deepEqual(
      stored.history.slice(-2).map((m) => m.messageId),
      [command.messageId, reply.status!.message!.messageId],
      'the command, then its reply',
    );
    held.open();
    await reading;
    await turn.done;
    assert.deepEqual(kinds(items), ['task', 'WORKING', 'WORKING', 'artifact', 'INPUT_REQUIRED']);
    const replies = items.filter(
      ({ payload }) =>
        payload?.$case === 'statusUpdate' &&
        payload.value.status?.message?.messageId === reply.status!.message!.messageId,
    );
    assert.equal(replies.length, 1, 'the reply reaches the stream once');
    const log = await logOf(task.id);
    assert.deepEqual(kinds(asItems(log)), ['task', 'task', 'WORKING', 'WORKING', 'artifact', 'INPUT_REQUIRED']);
    assert.deepEqual(asItems(log.slice(1)), plain(items), 'the stream is the log from the turn on');
  });

  it("issue 23: the turn's final status is stored before its lease is released: a message sent as soon as the final status arrives is not refused", async () => {
    held.open();
    const task = await idleTask();
    for (const text of ['one', 'two', 'three']) {
      const turn = await engine.startTurn(userMessage(text, task), alice);
      let final: StreamResponse | undefined;
      for await (const item of turn.events) {
        final = item;
        if (
          item.payload?.$case === 'statusUpdate' &&
          item.payload.value.status?.state !== TaskState.TASK_STATE_WORKING
        ) {
          // Still inside the stream: the lease must be back already, and the status stored.
          assert.equal(await engine.isBusy(task.id), false, 'the lease is back');
          const stored = await temp.store.tasks.load(task.id, alice);
          assert.equal(stored?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
        }
      }
      assert.equal(final?.payload?.$case, 'statusUpdate');
    }
    const stored = await temp.store.tasks.load(task.id, alice);
    assert.equal(stored?.history.filter((m) => m.role === Role.ROLE_AGENT).length, 3);
  });

  it('CMD-9: on an idle task a reply keeps the state, and a command posted again is stored once', async () => {
    const task = await idleTask();
    const command = message(task.id, task.contextId, Role.ROLE_USER, '/status');
    const first = statusUpdate(
      task.id,
      task.contextId,
      TaskState.TASK_STATE_WORKING,
      message(task.id, task.contextId, Role.ROLE_AGENT, 'idle'),
    );
    await engine.post(first, alice, { message: command });
    assert.equal(first.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'an idle task keeps its state');
    const again = statusUpdate(
      task.id,
      task.contextId,
      TaskState.TASK_STATE_WORKING,
      message(task.id, task.contextId, Role.ROLE_AGENT, 'idle again'),
    );
    await engine.post(again, alice, { message: structuredClone(command) });
    const after = await temp.store.tasks.load(task.id, alice);
    assert.equal(
      after?.history.filter((m) => m.messageId === command.messageId).length,
      1,
      'the command is stored once',
    );
  });

  it("posts reach a reader of the task's log in the order they were stored", async () => {
    const task = await idleTask();
    const subscription = await temp.store.feeds.follow(task.id);
    const updates = [1, 2, 3, 4, 5].map((n) =>
      statusUpdate(
        task.id,
        task.contextId,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        message(task.id, task.contextId, Role.ROLE_AGENT, `note ${n}`),
      ),
    );
    await Promise.all(updates.map((update) => engine.post(update, alice)));
    const seen: string[] = [];
    for (let i = 0; i < updates.length; i += 1) {
      const entry = await subscription.next();
      assert.equal(entry?.event.kind, 'statusUpdate');
      if (entry?.event.kind === 'statusUpdate') seen.push(entry.event.data.status!.message!.messageId);
    }
    subscription.close();
    const stored = await temp.store.tasks.load(task.id, alice);
    assert.deepEqual(
      seen,
      stored!.history.slice(-5).map((m) => m.messageId),
    );
  });

  it('CMD-13: a message or note posted again with a stored id is kept once, at its first place (the engine appends without scanning the history)', async () => {
    const task = await idleTask();
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

  it('drain ends running turns as interrupted and resolves only once the work it tracks has ended; no turn starts after', async () => {
    const task = await idleTask();
    const turn = await engine.startTurn(userMessage('long', task), alice);
    const reading = readAll(turn.events);
    let finish!: () => void;
    void engine.track(new Promise<void>((resolve) => (finish = resolve)));
    let drained = false;
    const draining = engine.drain().then(() => (drained = true));
    assert.equal(turns[0]!.abort.signal.aborted, true, 'the turn is told to stop');
    assert.equal((turns[0]!.abort.signal.reason as Error).name, 'TurnInterrupted');
    await turn.done;
    assert.equal(drained, false, 'a write tracked is still under way');
    finish();
    await draining;
    assert.equal(kinds(await reading).at(-1), 'INPUT_REQUIRED', "the turn's end is stored and streamed");
    await assert.rejects(engine.startTurn(userMessage('more', task), alice), (error) =>
      hasErrorCode(error, 'instance_draining'),
    );
  });

  it('a drain that begins while a turn is being opened refuses it (instance_draining) before its first write: nothing runs or is stored', async () => {
    const task = await idleTask();
    const storedBefore = kinds(asItems(await logOf(task.id)));
    let reached!: () => void;
    const opening = new Promise<void>((resolve) => (reached = resolve));
    let goOn!: () => void;
    const held = new Promise<void>((resolve) => (goOn = resolve));
    const starting = engine.startTurn(userMessage('late', task), alice, {
      beforeTurn: async () => {
        reached();
        await held;
      },
    });
    await opening;
    const finishing = engine.finishTurns(Number.MAX_SAFE_INTEGER);
    goOn();
    await assert.rejects(starting, (error) => hasErrorCode(error, 'instance_draining'));
    assert.equal(turns.length, 0, 'no turn ran, so none was interrupted');
    assert.equal(await finishing, true, 'no turn left');
    assert.deepEqual(kinds(asItems(await logOf(task.id))), storedBefore, 'nothing of the refused turn is stored');
  });

  it('drainTimeoutMs: finishTurns refuses new turns at once (instance_draining) while the running turn finishes on its own', async () => {
    const task = await idleTask();
    const other = await idleTask();
    const turn = await engine.startTurn(userMessage('long', task), alice);
    const reading = readAll(turn.events);
    const finishing = engine.finishTurns(Number.MAX_SAFE_INTEGER);
    await assert.rejects(engine.startTurn(userMessage('new', other), alice), (error) =>
      hasErrorCode(error, 'instance_draining'),
    );
    assert.equal(turns[0]!.abort.signal.aborted, false, 'the running turn goes on');
    held.open();
    assert.equal(await finishing, true, 'no turn left');
    assert.equal(kinds(await reading).at(-1), 'INPUT_REQUIRED');
    assert.deepEqual(kinds(asItems(await logOf(other.id))), ['task'], 'nothing of the refused turn is stored');
    assert.equal(await engine.finishTurns(0), true, 'nothing to wait for');
  });

  it('drainTimeoutMs: finishTurns gives up past its time, or at once when skipped (a second signal); drain then interrupts the turn', async () => {
    const task = await idleTask();
    const turn = await engine.startTurn(userMessage('long', task), alice);
    const reading = readAll(turn.events);
    assert.equal(await engine.finishTurns(1), false, 'past its time, the turn still runs');
    const skip = new AbortController();
    const waiting = engine.finishTurns(Number.MAX_SAFE_INTEGER, skip.signal);
    skip.abort();
    assert.equal(await waiting, false, 'skipped');
    assert.equal(turns[0]!.abort.signal.aborted, false, 'not interrupted by the wait itself');
    await engine.drain();
    assert.equal((turns[0]!.abort.signal.reason as Error).name, 'TurnInterrupted');
    assert.equal(kinds(await reading).at(-1), 'INPUT_REQUIRED', 'ended as interrupted, its end stored');
  });

  it('drain gives up waiting after its grace, and says what it left: the turn and the write that never ended', async () => {
    const stuck = localEngine(temp.store, {
      // A turn whose model never answers, even when aborted.
      run: () => new Promise(() => {}),
    });
    await stuck.startTurn(userMessage('stuck'), alice);
    void stuck.track(new Promise<void>(() => {})); // a write the database never answers
    let closed = false;
    const close = stuck.coordination.close.bind(stuck.coordination);
    stuck.coordination.close = () => close().then(() => void (closed = true));
    const left = await stuck.drain(1);
    // The turn is work under way too, until its end is stored.
    assert.deepEqual(left, { turns: 1, writes: 2 });
    await poll('the coordination closed, without waiting for the write', () => closed);
  });

  it('a drain with nothing left says so', async () => {
    assert.deepEqual(await engine.drain(1), { turns: 0, writes: 0 });
  });

  it('CancelTask on an idle task: the engine stores CANCELED, and a reader of its log sees it once', async () => {
    const task = await idleTask();
    const subscription = await temp.store.feeds.follow(task.id);
    await engine.cancel(task.id, alice);
    assert.equal((await temp.store.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_CANCELED);
    // A2A 1.0.1, 3.3.2: a task canceled already is not cancelable, and is left as it is.
    await assert.rejects(engine.cancel(task.id, alice), (error) => hasErrorCode(error, 'task_not_cancelable'));
    const entry = await subscription.next();
    assert.equal(entry?.event.kind === 'statusUpdate' && entry.event.data.status?.state, TaskState.TASK_STATE_CANCELED);
    subscription.close();
    assert.deepEqual(kinds(asItems(await logOf(task.id))), ['task', 'CANCELED'], 'stored once, and left as it is');
  });

  it('CancelTask refuses a task the caller cannot see, and one that ended otherwise; neither is touched', async () => {
    const task = await idleTask();
    await assert.rejects(engine.cancel(task.id, callContext('bob')), (error) => hasErrorCode(error, 'task_not_found'));
    const done = await idleTask(TaskState.TASK_STATE_COMPLETED);
    await assert.rejects(engine.cancel(done.id, alice), (error) => hasErrorCode(error, 'task_not_cancelable'));
    assert.equal((await temp.store.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal((await temp.store.tasks.load(done.id, alice))?.status?.state, TaskState.TASK_STATE_COMPLETED);
  });

  it('issue 23: cancel on a turn running here aborts it, stores CANCELED once, and its stream ends with it after its lease went back', async () => {
    const task = await idleTask();
    const turn = await engine.startTurn(userMessage('long', task), alice);
    const reading = readAll(turn.events);
    await engine.cancel(task.id, alice);
    assert.equal((turns[0]!.abort.signal.reason as Error).name, 'TurnCanceled');
    const items = await reading;
    assert.equal(kinds(items).at(-1), 'CANCELED');
    const stored = await temp.store.tasks.load(task.id, alice);
    assert.equal(stored?.status?.state, TaskState.TASK_STATE_CANCELED);
    const canceled = kinds(asItems(await logOf(task.id))).filter((kind) => kind === 'CANCELED');
    assert.deepEqual(canceled, ['CANCELED'], 'CANCELED stored once');
    assert.equal(await engine.isBusy(task.id), false);
    assert.deepEqual(errors, []);
  });

  it('abortTurn aborts only the turn it names, and a cancel is not made a mere stop', async () => {
    const task = await idleTask();
    const first = await engine.startTurn(userMessage('one', task), alice);
    engine.abortTurn(task.id, new TurnCanceled());
    engine.abortTurn(task.id, new TurnStopped());
    assert.equal((turns[0]!.abort.signal.reason as Error).name, 'TurnCanceled');
    await readAll(first.events);
    await first.done;
    // Canceled, the task has ended: a new task for the next turn.
    const next = await engine.startTurn(userMessage('two'), alice);
    engine.abortTurn(next.taskId, new TurnFenced(), turns[0]);
    assert.equal(turns[1]!.abort.signal.aborted, false, 'an earlier turn named: the running one goes on');
    engine.abortTurn(next.taskId, new TurnStopped(), turns[1]);
    assert.equal((turns[1]!.abort.signal.reason as Error).name, 'TurnStopped');
    await readAll(next.events);
  });
});

describe('the task engine across instances', () => {
  it('asks again for a cancel that the instance running the turn did not hear, until the turn ends', async (t) => {
    const temp = await tempStore();
    t.after(() => temp.dispose());
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    await temp.store.tasks.create(task, alice);
    const local = new LocalCoordination();
    let requests = 0;
    // The turn runs "elsewhere"; the first request is lost, the second one ends the turn there.
    const coordination: Coordination = Object.assign(Object.create(local) as LocalCoordination, {
      turnHeld: () => Promise.resolve(requests < 2),
      requestCancel: async (taskId: string) => {
        requests += 1;
        if (requests === 2)
          await temp.store.tasks.append(taskId, alice, [
            AgentEvent.statusUpdate(statusUpdate(taskId, task.contextId, TaskState.TASK_STATE_CANCELED)),
          ]);
      },
    });
    const engine = localEngine(temp.store, scripted(), { coordination });
    await engine.cancel(task.id, alice);
    assert.equal(requests, 2);
    assert.equal((await temp.store.tasks.load(task.id, alice))?.status?.state, TaskState.TASK_STATE_CANCELED);
    const log = await readLogAfter(temp.store.db, task.id, 0);
    assert.deepEqual(kinds(asItems(log)), ['task', 'CANCELED'], 'stored once, by the instance that ran the turn');
  });
});

/** Log entries as a stream sends them, as plain JSON (a stored event decoded leaves out what was undefined). */
function asItems(log: readonly LoggedEvent[]): StreamResponse[] {
  return plain(log.map((entry) => asStreamResponse(entry)!));
}

function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
