/**
 * Issue 33: a store failure is never the conversation's failure. A turn whose store fails under
 * it ends as interrupted, the task waiting for the message again (never FAILED, which no later
 * message can open), keeping what the model wrote, which its client saw streamed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { AgentEvent, ServerCallContext, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { HarnessError } from '../../src/errors.js';
import { HarnessExecutor } from '../../src/runtime/executor.js';
import {
  STORE_INTERRUPTED_MARK,
  STORE_INTERRUPTED_TEXT,
  SUBTASK_STORE_INTERRUPTED_TEXT,
} from '../../src/runtime/turn/turn-end.js';
import type { ModelGateway } from '../../src/runtime/model-gateway.js';
import type { TaskModels } from '../../src/runtime/task-models.js';
import { TurnUnwritten } from '../../src/runtime/turn/turns.js';
import type { Turn } from '../../src/engine-ports.js';
import { MODEL_KEY, NOTICE_KEY, SUBTASKS_KEY, textPart } from '../../src/wire.js';
import { turnOf } from './engine-support.js';
import type { TaskStateStore } from '../../src/ports.js';

const lost = () =>
  new HarnessError('store_failed', 'The PostgreSQL connection failed before the statement was answered.');

/** Runs one turn of task t1 and returns its final status, with what the executor reported and read. */
async function runTurn(options: {
  /** The model, given the turn (whose abort the engine would call). */
  gateway: (turn: Turn) => ModelGateway;
  addUsage?: () => Promise<void>;
  modelFor?: () => Promise<string>;
  task?: Task;
}) {
  const reported: unknown[] = [];
  const reads: string[] = [];
  const state = new Proxy({} as TaskStateStore, {
    get: (_target, name: string) => {
      if (name === 'addUsage') return options.addUsage ?? (async () => {});
      return () => {
        reads.push(name);
        return Promise.reject(new Error(`the turn read ${name}`));
      };
    },
  });
  const context = new ServerCallContext();
  const turn = turnOf('t1', context);
  const executor = new HarnessExecutor({
    models: { modelFor: options.modelFor ?? (async () => 'fixture:model') } as unknown as TaskModels,
    gateway: options.gateway(turn),
    state,
    endState: TaskState.TASK_STATE_INPUT_REQUIRED,
    onTurnError: (error) => reported.push(error),
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
  const events: AgentExecutionEvent[] = [];
  const { final } = await executor.run(
    { taskId: 't1', contextId: 'ctx', userMessage: message, task: options.task, context },
    turn,
    { publish: (event) => events.push(event) },
  );
  if (final) events.push(AgentEvent.statusUpdate(final));
  const last = events.at(-1)!;
  const status = last.kind === 'statusUpdate' ? last.data.status : undefined;
  const part = status?.message?.parts[0]?.content;
  return { status, text: part?.$case === 'text' ? part.value : undefined, reported, reads };
}

/** A model that writes "Hello there", then is cut off by a write of the turn failing: the engine aborts the turn. */
const cutByAFailedWrite = (turn: Turn): ModelGateway => ({
  async complete(request) {
    request.onText('Hello ');
    request.onText('there');
    turn.abort.abort(new TurnUnwritten());
    throw new Error('This operation was aborted');
  },
});
const notReached = (): ModelGateway => ({ complete: () => Promise.reject(new Error('not reached')) });

describe('executor: a store that fails under a turn (issue 33)', () => {
  it('a write that fails mid-reply ends the turn INPUT_REQUIRED, its final message keeping what the model wrote, marked', async () => {
    const { status, text } = await runTurn({ gateway: cutByAFailedWrite });
    assert.equal(status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the conversation stays open');
    assert.equal(text, `Hello there\n\n${STORE_INTERRUPTED_MARK}`);
    assert.equal(
      status?.message?.metadata?.[MODEL_KEY],
      'fixture:model',
      "the model's words, which later turns send it",
    );
    assert.equal(status?.message?.metadata?.[NOTICE_KEY], undefined);
  });

  it('a read that fails before the model wrote anything ends the turn INPUT_REQUIRED with the notice, never FAILED', async () => {
    const { status, text, reported } = await runTurn({
      gateway: notReached,
      modelFor: () => Promise.reject(lost()),
    });
    assert.equal(status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(text, STORE_INTERRUPTED_TEXT);
    assert.equal(status?.message?.metadata?.[NOTICE_KEY], 'store-failure');
    assert.equal(reported.length, 1, 'reported');
  });

  it("a whole reply whose token counts cannot be stored ends as a reply; the failure is reported; the task's links are not read again", async () => {
    const failure = lost();
    const { status, text, reported, reads } = await runTurn({
      gateway: () => ({
        async complete(request) {
          request.onText('Hello');
          return { text: 'Hello', inputTokens: 1, outputTokens: 1 };
        },
      }),
      addUsage: () => Promise.reject(failure),
    });
    assert.equal(status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(text, 'Hello');
    assert.deepEqual(reported, [failure]);
    assert.deepEqual(reads, [], 'the turn reads nothing of the task state but what its start read');
  });

  it("a sub-task's turn (its parent shown in the task's metadata) ends FAILED on a store failure, as its one turn", async () => {
    const subtask: Task = {
      id: 't1',
      contextId: 'ctx',
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
      history: [],
      artifacts: [],
      metadata: { [SUBTASKS_KEY]: { parent: 'p1' } },
    };
    const { status, text } = await runTurn({
      gateway: notReached,
      modelFor: () => Promise.reject(lost()),
      task: subtask,
    });
    assert.equal(status?.state, TaskState.TASK_STATE_FAILED);
    assert.equal(text, SUBTASK_STORE_INTERRUPTED_TEXT);
  });
});
