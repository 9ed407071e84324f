/**
 * Issue 23: a turn whose write was refused because another instance took its task over
 * (`turn_fenced`) stops where it is. `TrackedTurns` aborts it (the model request listens to that
 * signal), says so once, stores no end of its own, hands on nothing it published, and the stream
 * ends with the refusal. The end-to-end proof, with SIGSTOP and SIGCONT, is
 * test/e2e/instances-fencing.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { HarnessError } from '../../src/errors.js';
import { TaskEngine, type EngineTaskStore } from '../../src/runtime/engine.js';
import { LocalCoordination } from '../../src/runtime/local-coordination.js';
import { TrackedTurns } from '../../src/runtime/tracked-turns.js';
import { TurnFenced } from '../../src/runtime/turns.js';
import { callContext, newTask } from '../store/helpers.js';

/** A coordination that records what is handed on and what is dropped. */
class RecordingCoordination extends LocalCoordination {
  readonly calls: string[] = [];
  override handOn(taskId?: string): Promise<void> {
    this.calls.push(`handOn ${taskId}`);
    return Promise.resolve();
  }
  override discard(taskId: string): void {
    this.calls.push(`discard ${taskId}`);
  }
}

describe('a turn fenced off its task (issue 23)', () => {
  it('is aborted as fenced, told once, stores no end of its own, drops what it published, and its stream ends with the refusal', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_WORKING });
    const context = callContext('alice');
    const writes: string[] = [];
    const store: EngineTaskStore = {
      save: () => Promise.resolve(void writes.push('save')),
      load: () => Promise.resolve(void writes.push('load')),
      modify: () => Promise.resolve(void writes.push('modify')),
      awaitWritesUnderWay: () => Promise.resolve(),
    };
    const coordination = new RecordingCoordination();
    const engine = new TaskEngine({ coordination, store, onError: () => undefined });
    const turn = await engine.begin(task.id, context);
    // The executor's part: stopped, a fenced turn only ends (`HarnessExecutor.execute`).
    turn.abort.signal.addEventListener('abort', () => void engine.end(turn));

    const refusal = new HarnessError('turn_fenced', `This turn of task ${task.id} was taken over.`);
    const inner = {
      async *sendMessageStream(): AsyncGenerator<StreamResponse, void, undefined> {
        yield { payload: { $case: 'task', value: task } };
        throw refusal;
      },
    } as unknown as A2ARequestHandler;
    const fenced: Array<[string, number]> = [];
    const tracked = new TrackedTurns(inner, engine, undefined, (taskId, epoch) => fenced.push([taskId, epoch]));
    const items: StreamResponse[] = [];
    await assert.rejects(
      (async () => {
        for await (const item of tracked.sendMessageStream(
          { tenant: '', message: undefined, configuration: undefined, metadata: {} },
          context,
        ))
          items.push(item);
      })(),
      (error) => error === refusal,
    );

    assert.ok(turn.abort.signal.reason instanceof TurnFenced, 'aborted as fenced');
    assert.deepEqual(fenced, [[task.id, turn.epoch]], 'told once, with its epoch');
    assert.equal(items.length, 1, 'nothing after the refusal');
    assert.deepEqual(writes, [], 'no end stored');
    assert.deepEqual(coordination.calls, [`discard ${task.id}`], 'nothing handed on, its events dropped');
    assert.equal(await engine.isBusy(task.id), false, 'its lease given back');
  });
});
