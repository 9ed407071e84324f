/**
 * A2A 1.1's generation fields in JSON (issue 36): read from a 1.1 call's raw params, written on
 * a 1.1 answer's Task, status update and artifact update; a 1.0 call's params and answers are
 * left as they are.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { StreamResponse, Task, TaskState, type Message } from '@a2a-js/sdk';
import { markGeneration, requestFieldsOf, responseJsonFor } from '../../src/a2a/index.js';
import { GENERATION_KEY } from '../../src/wire.js';

const task: Task = {
  id: 't-1',
  contextId: 'c-1',
  status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
  artifacts: [],
  history: [],
  metadata: { [GENERATION_KEY]: 5 },
};
const status: StreamResponse = {
  payload: {
    $case: 'statusUpdate',
    value: { taskId: 't-1', contextId: 'c-1', status: task.status, metadata: { [GENERATION_KEY]: 6 } },
  },
};
const artifact: StreamResponse = {
  payload: {
    $case: 'artifactUpdate',
    value: {
      taskId: 't-1',
      contextId: 'c-1',
      artifact: { artifactId: 'a', name: '', description: '', parts: [], metadata: undefined, extensions: [] },
      append: false,
      lastChunk: true,
      metadata: { [GENERATION_KEY]: 7 },
    },
  },
};
const message: Message = {
  messageId: 'm',
  contextId: 'c-1',
  taskId: 't-1',
  role: 2,
  parts: [],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
};

describe('A2A 1.1 generation fields read from JSON params (issue 36)', () => {
  it('GetTask: currentGeneration, a number or a decimal string (ProtoJSON int64)', () => {
    assert.deepEqual(requestFieldsOf('1.1', 'getTask', { id: 't', currentGeneration: 3 }), { currentGeneration: 3 });
    assert.deepEqual(requestFieldsOf('1.1', 'getTask', { id: 't', currentGeneration: '12' }), {
      currentGeneration: 12,
    });
    assert.deepEqual(requestFieldsOf('1.1', 'getTask', { id: 't' }), {});
  });

  it('SendMessage and SendStreamingMessage: configuration.ifGenerationMatch', () => {
    for (const method of ['sendMessage', 'sendMessageStream'] as const) {
      assert.deepEqual(requestFieldsOf('1.1', method, { message: {}, configuration: { ifGenerationMatch: '4' } }), {
        ifGenerationMatch: 4,
      });
      assert.deepEqual(requestFieldsOf('1.1', method, { message: {}, configuration: {} }), {});
      assert.deepEqual(requestFieldsOf('1.1', method, { message: {} }), {});
      // Top level is not where the draft puts it.
      assert.deepEqual(requestFieldsOf('1.1', method, { message: {}, ifGenerationMatch: 4 }), {});
    }
  });

  it('a value that is no whole number is a malformed request', () => {
    for (const bad of ['3.5', 'abc', 1.5, true, {}, '9007199254740993'])
      assert.throws(
        () => requestFieldsOf('1.1', 'getTask', { id: 't', currentGeneration: bad }),
        RequestMalformedError,
      );
  });

  it('a 1.0 call, and other methods, have none: 1.0 is unchanged', () => {
    assert.deepEqual(requestFieldsOf('1.0', 'getTask', { id: 't', currentGeneration: 3 }), {});
    assert.deepEqual(requestFieldsOf('1.0', 'sendMessage', { configuration: { ifGenerationMatch: 3 } }), {});
    assert.deepEqual(requestFieldsOf('1.1', 'listTasks', { currentGeneration: 3 }), {});
  });
});

describe('A2A 1.1 generation written on JSON answers (issue 36)', () => {
  it('a Task (GetTask) gets generation, as ProtoJSON writes an int64; its metadata key stays', () => {
    const json = Task.toJSON(task) as Record<string, unknown>;
    const written = responseJsonFor('1.1', json, task) as Record<string, unknown>;
    assert.equal(written.generation, '5');
    assert.deepEqual(written.metadata, { [GENERATION_KEY]: 5 });
    assert.equal(json.generation, undefined, 'the JSON given is not changed');
  });

  it('a stream item: inside its task, status update or artifact update', () => {
    const wrappedTask: StreamResponse = { payload: { $case: 'task', value: task } };
    for (const [item, key, generation] of [
      [wrappedTask, 'task', '5'],
      [status, 'statusUpdate', '6'],
      [artifact, 'artifactUpdate', '7'],
    ] as const) {
      const written = responseJsonFor('1.1', StreamResponse.toJSON(item), item) as Record<string, any>;
      assert.equal(written[key].generation, generation, key);
      assert.equal(written.generation, undefined, key);
      // Written alone (an SSE event's item, unwrapped), the field goes on it.
      const alone = responseJsonFor('1.1', { taskId: 't-1' }, item) as Record<string, unknown>;
      assert.equal(alone.generation, generation, key);
    }
  });

  it('a marked item (a command reply, whose metadata takes no more keys) carries its mark', () => {
    const reply = markGeneration({ ...task, metadata: {} }, 9);
    assert.equal((responseJsonFor('1.1', Task.toJSON(reply), reply) as Record<string, unknown>).generation, '9');
  });

  it('a message, an item without a generation, and every 1.0 answer are the JSON as given', () => {
    const messageItem: StreamResponse = { payload: { $case: 'message', value: message } };
    const messageJson = StreamResponse.toJSON(messageItem);
    assert.equal(responseJsonFor('1.1', messageJson, messageItem), messageJson);
    const bare = { ...task, metadata: {} };
    const bareJson = Task.toJSON(bare);
    assert.equal(responseJsonFor('1.1', bareJson, bare), bareJson);
    for (const [item, json] of [
      [task, Task.toJSON(task)],
      [status, StreamResponse.toJSON(status)],
      [artifact, StreamResponse.toJSON(artifact)],
    ] as const)
      assert.equal(responseJsonFor('1.0', json, item), json);
  });
});
