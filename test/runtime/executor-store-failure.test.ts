import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, ServerCallContext, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { HarnessExecutor } from '../../src/runtime/executor.js';
import { STORE_FAILURE_TEXT } from '../../src/runtime/turn-end.js';
import type { ModelGateway } from '../../src/runtime/model-gateway.js';
import type { TaskModels } from '../../src/runtime/task-models.js';
import type { TaskStateStore } from '../../src/runtime/task-state.js';
import { turnOf } from './engine-support.js';
import { textPart } from '../../src/wire.js';

const replying: ModelGateway = {
  async complete(request) {
    request.onText('Hello');
    return { text: 'Hello', inputTokens: 1, outputTokens: 1 };
  },
};

describe('executor: a store that fails while a turn ends', () => {
  it('ends the turn FAILED saying so and reports the error, rather than guessing what kind of task it was', async () => {
    const failure = new Error('database is locked');
    const state = {
      getLinks: () => Promise.reject(failure),
      addUsage: async () => {},
    } as unknown as TaskStateStore;
    const reported: Array<[unknown, string]> = [];
    const executor = new HarnessExecutor({
      models: { modelFor: async () => 'fixture:model' } as unknown as TaskModels,
      gateway: replying,
      state,
      endState: TaskState.TASK_STATE_INPUT_REQUIRED,
      onTurnError: (error, taskId) => reported.push([error, taskId]),
    });
    const message = {
      messageId: 'm1',
      taskId: 't1',
      contextId: 'ctx',
      role: Role.ROLE_USER,
      parts: [textPart('Hi')],
      metadata: {},
      extensions: [],
      referenceTaskIds: [],
    };
    const context = new ServerCallContext();
    const events: AgentExecutionEvent[] = [];
    const { final } = await executor.run(
      { taskId: 't1', contextId: 'ctx', userMessage: message, task: undefined, context },
      turnOf('t1', context),
      { publish: (event) => events.push(event) },
    );
    if (final) events.push(AgentEvent.statusUpdate(final));

    const last = events.at(-1)!;
    assert.equal(last.kind, 'statusUpdate');
    const status = last.kind === 'statusUpdate' ? last.data.status : undefined;
    assert.equal(status?.state, TaskState.TASK_STATE_FAILED);
    assert.equal(
      status?.message?.parts[0]?.content?.$case === 'text' && status.message.parts[0].content.value,
      STORE_FAILURE_TEXT,
    );
    assert.deepEqual(reported, [[failure, 't1']]);
  });
});
