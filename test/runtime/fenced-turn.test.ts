/**
 * Issue 23: a turn whose write was refused because another instance took its task over
 * (`turn_fenced`) stops where it is. The engine aborts it (the model request listens to that
 * signal), says so once, stores nothing more of it (no end of its own), and the turn's stream
 * ends with the refusal. The end-to-end proof, with SIGSTOP and SIGCONT, is
 * test/e2e/instances-fencing.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { HarnessError, hasErrorCode } from '../../src/errors.js';
import type { Turn } from '../../src/engine-ports.js';
import { TurnFenced } from '../../src/runtime/turn/turns.js';
import { readLogAfter } from '../../src/store/task-log.js';
import { callContext, newTask, tempStore } from '../store/helpers.js';
import { kinds, localEngine, scripted, userMessage } from './engine-support.js';

describe('a turn fenced off its task (issue 23)', () => {
  it('a fenced write stops the turn, stores nothing more, its stream ends with turn_fenced; told once, its lease given back', async (t) => {
    const temp = await tempStore();
    t.after(() => temp.dispose());
    const context = callContext('alice');
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await temp.store.tasks.create(task, context);
    const tasks = temp.store.tasks;
    let fenced = false;
    const tried: string[] = [];
    const store = {
      read: tasks.read.bind(tasks),
      load: tasks.load.bind(tasks),
      create: tasks.create.bind(tasks),
      modify: tasks.modify.bind(tasks),
      // Another instance took the task over before the turn's first write (its task event and WORKING, one write).
      append: (...args: Parameters<typeof tasks.append>) => {
        const events: readonly AgentExecutionEvent[] = args[2];
        tried.push(...events.map((e) => e.kind));
        if (fenced || events.some((e) => e.kind !== 'task')) {
          fenced = true;
          return Promise.reject(new HarnessError('turn_fenced', `Task ${task.id} is another instance's now.`));
        }
        return tasks.append(...args);
      },
    };
    const turns: Turn[] = [];
    const told: Array<[string, number]> = [];
    const engine = localEngine(
      temp.store,
      scripted({
        started: (_request, turn) => turns.push(turn),
        hold: (_request, turn) =>
          new Promise((resolve) => turn.abort.signal.addEventListener('abort', () => resolve(), { once: true })),
      }),
      { store, onFenced: (taskId, epoch) => told.push([taskId, epoch]) },
    );

    const turn = await engine.startTurn(userMessage('hi', task), context);
    const items: StreamResponse[] = [];
    await assert.rejects(
      (async () => {
        for await (const item of turn.events) items.push(item);
      })(),
      (error) => hasErrorCode(error, 'turn_fenced'),
    );
    await turn.done;

    assert.ok(turns[0]!.abort.signal.reason instanceof TurnFenced, 'aborted as fenced');
    assert.deepEqual(told, [[task.id, turns[0]!.epoch]], 'told once, with its epoch');
    assert.deepEqual(kinds(items), [], 'nothing of the turn');
    assert.deepEqual(tried, ['task', 'statusUpdate'], 'no write tried after the refusal, no end of its own');
    const log = await readLogAfter(temp.store.db, task.id, 0);
    assert.deepEqual(
      log.map((entry) => entry.event.kind),
      ['task'],
      'the log holds the task’s creation only',
    );
    assert.equal(await engine.isBusy(task.id), false, 'its lease given back');
  });
});
