/**
 * The tool calls of one turn as the executor publishes them, with the model and the tools
 * scripted: the order of text and calls in the stream, and that no call is left running when
 * the turn ends (TOOL-1, TOOL-4). Every event is checked against A2A 1.0.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, StreamResponse, TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { HarnessExecutor } from '../../src/runtime/executor.js';
import type { ModelGateway, ModelRequest } from '../../src/runtime/model-gateway.js';
import { TaskModels } from '../../src/runtime/task-models.js';
import { TurnCanceled } from '../../src/runtime/turn/turns.js';
import { closingParts, openToolCalls, toolCallMessage } from '../../src/runtime/tool-calls.js';
import type { ToolEntry, ToolOutcome } from '../../src/tools/index.js';
import { toolCallsOf } from '../../src/wire.js';
import { turnOf } from './engine-support.js';
import { StreamResponse as StreamResponseSchema, violations } from '../support/a2a-schema.js';
import { callContext, message } from '../store/helpers.js';
import type { TaskStateStore } from '../../src/ports.js';

const state: TaskStateStore = {
  getTaskModel: async () => undefined,
  setTaskModel: async () => {},
  getContextModel: async () => undefined,
  getModelChoice: async () => undefined,
  addUsage: async () => {},
  getUsage: async () => [],
  getLastUsage: async () => undefined,
  getLinks: async () => ({ children: [] }),
};

function entry(name: string, call: (signal: AbortSignal) => Promise<ToolOutcome>): ToolEntry {
  return {
    name: `fx_${name}`,
    server: 'fx',
    tool: name,
    description: name,
    inputSchema: { type: 'object' },
    needsApproval: false,
    call: (_input, signal) => call(signal),
  };
}

/** Runs one turn with `tools` and `gateway`; returns its events, and a way to cancel it once started. */
async function turn(
  tools: ToolEntry[],
  gateway: ModelGateway,
  whileRunning?: (cancel: () => Promise<void>) => void,
): Promise<AgentExecutionEvent[]> {
  const executor = new HarnessExecutor({
    models: new TaskModels({ list: () => [], has: () => true, defaultModel: 'fixture:small' }, state),
    gateway,
    state,
    tools: { list: async () => ({ tools, missing: [] }) },
    endState: TaskState.TASK_STATE_INPUT_REQUIRED,
  });
  const taskId = randomUUID();
  const contextId = randomUUID();
  const events: AgentExecutionEvent[] = [];
  const context = callContext();
  const request = {
    taskId,
    contextId,
    userMessage: message(taskId, contextId, Role.ROLE_USER, 'hello'),
    task: undefined,
    context,
  };
  const turn = turnOf(taskId, context);
  whileRunning?.(async () => turn.abort.abort(new TurnCanceled()));
  const { final } = await executor.run(request, turn, { publish: (event) => events.push(event) });
  // The engine stores the final status after the turn's events.
  if (final) events.push(AgentEvent.statusUpdate(final));
  for (const event of events) {
    const json = StreamResponse.toJSON({
      payload: { $case: event.kind, value: event.data } as StreamResponse['payload'],
    });
    assert.deepEqual(violations(StreamResponseSchema, json, event.kind), []);
  }
  return events;
}

/** What the stream shows, in order: `text` for reply chunks with text, `<tool>:<status>` for calls, the final state. */
function timeline(events: AgentExecutionEvent[]): string[] {
  return events.flatMap((event) => {
    if (event.kind === 'artifactUpdate')
      return event.data.artifact!.parts.some((p) => p.content?.$case === 'text' && p.content.value) ? ['text'] : [];
    if (event.kind !== 'statusUpdate') return [];
    const calls = toolCallsOf(event.data.status?.message?.parts).map((c) => `${c.tool}:${c.status}`);
    return calls.length ? calls : [TaskState[event.data.status!.state]];
  });
}

describe('tool calls in a turn', () => {
  it('TOOL-1: the text written before a call goes out before the call, and each status change is an update', async () => {
    const gateway: ModelGateway = {
      async complete(request: ModelRequest) {
        request.onText('Let me look. ');
        const output = await request.tools![0]!.execute({}, request.abortSignal);
        request.onText(`Found: ${output}`);
        return { text: `Let me look. Found: ${output}`, inputTokens: 1, outputTokens: 1 };
      },
    };
    const events = await turn([entry('echo', async () => ({ status: 'succeeded', output: 'it' }))], gateway);
    assert.deepEqual(timeline(events), [
      'TASK_STATE_WORKING',
      'text',
      'fx_echo:running',
      'fx_echo:succeeded',
      'text',
      'TASK_STATE_INPUT_REQUIRED',
    ]);
  });

  it('TOOL-2: a failed call rejects with the text the model reads as the error result', async () => {
    let seen = '';
    const gateway: ModelGateway = {
      async complete(request: ModelRequest) {
        await request.tools![0]!.execute({}, request.abortSignal).catch((error: Error) => (seen = error.message));
        return { text: 'went on', inputTokens: 1, outputTokens: 1 };
      },
    };
    const events = await turn([entry('fail', async () => ({ status: 'failed', output: 'no such file' }))], gateway);
    assert.equal(seen, 'no such file');
    assert.deepEqual(timeline(events).slice(-3), ['fx_fail:running', 'fx_fail:failed', 'TASK_STATE_INPUT_REQUIRED']);
  });

  it('TOOL-4: a canceled turn closes the call it left running as canceled, before its final status', async () => {
    let started!: () => void;
    const callStarted = new Promise<void>((resolve) => (started = resolve));
    const gateway: ModelGateway = {
      async complete(request: ModelRequest) {
        // A model request that ends as soon as the turn is aborted, before the tool has answered.
        void request.tools![0]!.execute({}, request.abortSignal).catch(() => undefined);
        await new Promise((_resolve, reject) =>
          request.abortSignal.addEventListener('abort', () => reject(request.abortSignal.reason)),
        );
        return { text: '', inputTokens: 0, outputTokens: 0 };
      },
    };
    const hang = entry('hang', (signal) => {
      started();
      return new Promise((resolve) =>
        signal.addEventListener('abort', () => setImmediate(() => resolve({ status: 'canceled', output: 'late' }))),
      );
    });
    const events = await turn([hang], gateway, (cancel) => void callStarted.then(cancel));
    assert.deepEqual(timeline(events), [
      'TASK_STATE_WORKING',
      'fx_hang:running',
      'fx_hang:canceled',
      'TASK_STATE_CANCELED',
    ]);
  });

  it('TOOL-4: the calls a history left open are found and closed as canceled', () => {
    const running = toolCallMessage('t', 'c', { id: 'a', tool: 'fx_hang', server: 'fx', input: {}, status: 'running' });
    const doneRunning = toolCallMessage('t', 'c', {
      id: 'b',
      tool: 'fx_echo',
      server: 'fx',
      input: {},
      status: 'running',
    });
    const done = toolCallMessage('t', 'c', {
      id: 'b',
      tool: 'fx_echo',
      server: 'fx',
      input: {},
      status: 'succeeded',
      output: 'x',
    });
    const open = openToolCalls([running, doneRunning, done]);
    assert.deepEqual(
      open.map((c) => c.id),
      ['a'],
    );
    assert.deepEqual(
      toolCallsOf(closingParts(open)).map((c) => [c.id, c.status]),
      [['a', 'canceled']],
    );
  });
});
