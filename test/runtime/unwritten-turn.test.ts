/**
 * Issue 22: a turn whose store fails under it (a PostgreSQL connection ended) never ends
 * half-written. A write of its events failing, the turn is stopped and ends saying so, or keeps
 * the end it had; the engine stores that final status, tried again until written, and the
 * turn's stream ends with it; the turn's lease, whose release failed too, is released on a retry.
 */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { HarnessError } from '../../src/errors.js';
import type { TaskEngine } from '../../src/runtime/engine.js';
import { agentMessage, statusUpdate } from '../../src/runtime/events.js';
import { LocalCoordination } from '../../src/coordination/local-coordination.js';
import { STORE_INTERRUPTED_TEXT } from '../../src/runtime/turn/turn-end.js';
import type { TurnWriter } from '../../src/runtime/turn/turn-writer.js';
import { callContext, newTask, tempStore, textPart, type TempStore } from '../store/helpers.js';
import { kinds, localEngine, openingTask, readAll, userMessage, type ScriptedExecutor } from './engine-support.js';

const lost = () =>
  new HarnessError('store_failed', 'The PostgreSQL connection failed before the statement was answered.');

/** A coordination whose first lease release fails, as a statement on an ended connection does. */
class FlakyLeases extends LocalCoordination {
  failures = 1;
  override releaseTurn(taskId: string): Promise<boolean | undefined> {
    if (this.failures-- > 0) return Promise.reject(lost());
    return super.releaseTurn(taskId);
  }
}

/**
 * A turn that publishes its opening and a reply chunk, then, stopped because a write failed,
 * ends as the executor ends such a turn; not stopped, it ends with its reply.
 */
const executor: ScriptedExecutor = {
  async run(request, turn, publisher) {
    const { taskId, contextId } = request;
    publisher.publish(openingTask(request));
    publisher.publish(AgentEvent.statusUpdate(statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING)));
    // The opening written (or failed) before the chunk goes out: each is its own write.
    await (publisher as Partial<TurnWriter>).flushed?.();
    publisher.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: 'r',
          name: '',
          description: '',
          parts: [textPart('Hel')],
          metadata: {},
          extensions: [],
        },
        append: false,
        lastChunk: false,
        metadata: {},
      }),
    );
    const stopped = new Promise<boolean>((resolve) => {
      turn.abort.signal.addEventListener('abort', () => resolve(true), { once: true });
      setImmediate(() => resolve(turn.abort.signal.aborted));
    });
    if (await stopped) {
      assert.equal((turn.abort.signal.reason as Error).name, 'TurnUnwritten');
      const message = agentMessage(taskId, contextId, STORE_INTERRUPTED_TEXT, 'store-failure');
      return { final: statusUpdate(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, message) };
    }
    return {
      final: statusUpdate(
        taskId,
        contextId,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        agentMessage(taskId, contextId, 'Hello'),
      ),
    };
  },
};

describe('a turn whose events could not be stored (issue 22)', () => {
  let temp: TempStore;
  let engine: TaskEngine;
  let task: Task;
  const errors: string[] = [];
  const context = callContext('alice');
  /** Whether the next append of these events fails. */
  let fails: (events: readonly AgentExecutionEvent[]) => boolean;

  beforeEach(async () => {
    temp = await tempStore();
    errors.length = 0;
    fails = () => false;
    task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.create(task, context);
    const tasks = temp.store.tasks;
    const store = {
      read: tasks.read.bind(tasks),
      load: tasks.load.bind(tasks),
      create: tasks.create.bind(tasks),
      modify: tasks.modify.bind(tasks),
      append: (...args: Parameters<typeof tasks.append>) =>
        fails(args[2]) ? Promise.reject(lost()) : tasks.append(...args),
    };
    engine = localEngine(temp.store, executor, {
      coordination: new FlakyLeases(),
      store,
      onError: (_error, what) => errors.push(what),
    });
  });
  afterEach(() => temp.dispose());

  const isFinal = (event: AgentExecutionEvent) =>
    event.kind === 'statusUpdate' && event.data.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;

  it('a turn whose write fails ends saying the store failed, and its end is stored once the store is back; its lease is released on a retry', async () => {
    let finalTries = 0;
    // The reply chunk's write fails, and the first try of storing the turn's end.
    fails = (events) => events.some((e) => e.kind === 'artifactUpdate') || (events.some(isFinal) && finalTries++ === 0);
    const turn = await engine.startTurn(userMessage('hi', task), context);
    const items = await readAll(turn.events);
    await turn.done;

    assert.deepEqual(kinds(items), ['task', 'WORKING', 'INPUT_REQUIRED'], 'the chunk that failed is not in the stream');
    const last = items.at(-1)!.payload;
    const ended = last?.$case === 'statusUpdate' ? last.value.status : undefined;
    const stored = (await temp.store.tasks.load(task.id, context))!;
    assert.equal(stored.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(stored.status?.message?.messageId, ended?.message?.messageId, 'the status the stream ended with');
    assert.equal(stored.status?.message?.parts[0]?.content?.value, STORE_INTERRUPTED_TEXT);
    assert.ok(stored.history.some((m) => m.messageId === ended?.message?.messageId));
    assert.equal(await engine.isBusy(task.id), false, 'the lease was released');
    assert.deepEqual(errors, [
      'storing an event of a turn',
      'storing the end of a turn (trying again)',
      'ending a turn (trying again)',
    ]);
  });

  it('a turn that ended before its final status failed to be stored keeps that status: it is stored as it was published', async () => {
    let finalTries = 0;
    fails = (events) => events.some(isFinal) && finalTries++ === 0;
    const turn = await engine.startTurn(userMessage('hi', task), context);
    const items = await readAll(turn.events);
    await turn.done;

    assert.deepEqual(kinds(items), ['task', 'WORKING', 'artifact', 'INPUT_REQUIRED']);
    const last = items.at(-1)!.payload;
    const ended = last?.$case === 'statusUpdate' ? last.value.status : undefined;
    assert.equal(ended?.message?.parts[0]?.content?.value, 'Hello');
    const stored = (await temp.store.tasks.load(task.id, context))!;
    assert.equal(stored.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(stored.status?.message?.messageId, ended?.message?.messageId);
    assert.equal(finalTries, 2, 'stored on the second try');
  });

  it('a turn whose first write fails (its task event) ends all the same: its end is stored, and its lease given back', async () => {
    let failed = false;
    fails = (events) => !failed && events.some((e) => e.kind === 'task') && (failed = true);
    const turn = await engine.startTurn(userMessage('hi', task), context);
    turn.detach();
    await turn.done;
    const stored = (await temp.store.tasks.load(task.id, context))!;
    assert.equal(stored.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(stored.status?.message?.parts[0]?.content?.value, STORE_INTERRUPTED_TEXT);
    assert.equal(await engine.isBusy(task.id), false);
  });

  // The stream starts at the turn's task event: the engine stores it with the turn's end when
  // the write that held it failed, or the stream would skip the end and wait for ever.
  it('a turn whose first write fails (its task event): its stream sends the task, then its final status', async () => {
    let failed = false;
    fails = (events) => !failed && events.some((e) => e.kind === 'task') && (failed = true);
    const turn = await engine.startTurn(userMessage('hi', task), context);
    assert.deepEqual(kinds(await readAll(turn.events)), ['task', 'INPUT_REQUIRED']);
    await turn.done;
    const stored = (await temp.store.tasks.load(task.id, context))!;
    assert.equal(stored.status?.message?.parts[0]?.content?.value, STORE_INTERRUPTED_TEXT);
  });
});
