import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { Role, StreamResponse, TaskState, type TaskArtifactUpdateEvent } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { HarnessExecutor } from '../../src/runtime/executor.js';
import type { ModelGateway, ModelRequest } from '../../src/runtime/model-gateway.js';
import { TaskModels } from '../../src/runtime/task-models.js';
import { turnOf } from './engine-support.js';
import { StreamResponse as StreamResponseSchema, violations } from '../support/a2a-schema.js';
import { callContext, message } from '../store/helpers.js';
import type { TaskStateStore } from '../../src/ports.js';

/**
 * The events one turn publishes, with the model scripted: how a reply is cut into artifact
 * chunks, and that every event is valid A2A 1.0 (the end-to-end tests check the same on the
 * wire; here the cases are chosen, including an empty reply).
 */

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

/** A model that writes `pieces`, each delta in its own turn of the event loop unless `burst`. */
function scripted(pieces: string[], burst = false): ModelGateway {
  return {
    async complete(request: ModelRequest) {
      for (const piece of pieces) {
        request.onText(piece);
        if (!burst) await nextTurn();
      }
      return { text: pieces.join(''), inputTokens: 1, outputTokens: 1 };
    },
  };
}

/** Runs one turn and returns the events it published. */
async function turn(gateway: ModelGateway): Promise<AgentExecutionEvent[]> {
  const executor = new HarnessExecutor({
    models: new TaskModels({ list: () => [], has: () => true, defaultModel: 'fixture:small' }, state),
    gateway,
    state,
    endState: TaskState.TASK_STATE_INPUT_REQUIRED,
  });
  const taskId = randomUUID();
  const contextId = randomUUID();
  const userMessage = message(taskId, contextId, Role.ROLE_USER, 'hello');
  const events: AgentExecutionEvent[] = [];
  const context = callContext();
  const request = { taskId, contextId, userMessage, task: undefined, context };
  const { final } = await executor.run(request, turnOf(taskId, context), { publish: (event) => events.push(event) });
  // The engine stores the final status after the turn's events.
  if (final) events.push(AgentEvent.statusUpdate(final));
  return events;
}

const chunks = (events: AgentExecutionEvent[]): TaskArtifactUpdateEvent[] =>
  events.flatMap((e) => (e.kind === 'artifactUpdate' ? [e.data] : []));
const textOf = (chunk: TaskArtifactUpdateEvent) =>
  chunk.artifact!.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

/** Every event as a client would receive it, checked against the A2A 1.0 schemas. */
function assertValid(events: AgentExecutionEvent[]): void {
  for (const event of events) {
    const json = StreamResponse.toJSON({
      payload: { $case: event.kind, value: event.data } as StreamResponse['payload'],
    });
    assert.deepEqual(violations(StreamResponseSchema, json, event.kind), []);
  }
}

describe('a turn streamed as artifact chunks', () => {
  it('closes the artifact with an update that has a text part, even when all the text went out before it', async () => {
    const events = await turn(scripted(['Hel', 'lo', ' there']));
    assertValid(events);
    const updates = chunks(events);
    assert.ok(updates.length >= 2, 'the pieces stream as they arrive');
    assert.ok(
      updates.every((update) => update.artifact!.parts.length === 1),
      'no update has an artifact without a part',
    );
    assert.deepEqual(
      updates.map((update) => update.lastChunk),
      updates.map((_, i) => i === updates.length - 1),
      'only the last update closes the artifact',
    );
    assert.deepEqual(
      updates.map((update) => update.append),
      updates.map((_, i) => i > 0),
    );
    assert.equal(updates.map(textOf).join(''), 'Hello there');
    assert.equal(textOf(updates.at(-1)!), '', 'the closing update adds no text');
  });

  it('puts the text still waiting at the end into the update that closes the artifact', async () => {
    const events = await turn(scripted(['all ', 'at ', 'once'], true));
    assertValid(events);
    const updates = chunks(events);
    assert.equal(updates.length, 1);
    assert.deepEqual(
      { text: textOf(updates[0]!), append: updates[0]!.append, lastChunk: updates[0]!.lastChunk },
      { text: 'all at once', append: false, lastChunk: true },
    );
  });

  it('an empty reply publishes no artifact, and the final status says the model returned no text', async () => {
    const events = await turn(scripted([]));
    assertValid(events);
    assert.deepEqual(chunks(events), []);
    const final = events.at(-1);
    assert.equal(final?.kind, 'statusUpdate');
    assert.equal(final.kind === 'statusUpdate' && final.data.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(
      final.kind === 'statusUpdate' ? (final.data.status?.message?.parts[0]?.content?.value as string) : '',
      /returned no text/,
    );
  });
});
