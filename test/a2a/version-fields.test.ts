/**
 * The hook where the protocol version a call asks for may shape its fields beyond the SDK's
 * converters (src/a2a/version-fields.ts, issue 36): under A2A 1.0 it adds nothing to a call's
 * params and leaves each answer's JSON as the converters wrote it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Task, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { CALL_METHODS } from '../../src/a2a/index.js';
import { requestFieldsOf, responseJsonFor } from '../../src/a2a/version-fields.js';

const task: Task = {
  id: 't1',
  contextId: 'c1',
  status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
  artifacts: [],
  history: [],
  metadata: { 'tiny-harness/generation': 3 },
};

describe('the version fields hook (issue 36)', () => {
  it('adds no field to any call of A2A 1.0, whatever its params hold', () => {
    for (const method of CALL_METHODS)
      assert.deepEqual(requestFieldsOf('1.0', method, { id: 't1', ifGenerationMatch: 2, currentGeneration: 1 }), {});
  });

  it('leaves the JSON of a task and of a streamed event as the converters wrote it, the same object', () => {
    const json = Task.toJSON(task);
    assert.equal(responseJsonFor('1.0', json, task), json);
    const event: StreamResponse = { payload: { $case: 'task', value: task } };
    const eventJson = { task: json };
    assert.equal(responseJsonFor('1.0', eventJson, event), eventJson);
    assert.deepEqual(eventJson, { task: Task.toJSON(task) });
  });
});
