/**
 * The page's waits for a sub-task to change (issue 36), without a browser and against a scripted
 * fetch: on an agent whose card lists A2A 1.1, `GetTask` with `currentGeneration` over JSON-RPC
 * beside the page, with `A2A-Version: 1.1`, read by its `generation` field, and only a few such
 * waits at once; on an agent without 1.1, the SDK's GetTask polled as before.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Task, TaskState, type AgentCard } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { MAX_WAITING, waitPastFor, watchSubtask } from '../../web/src/task-wait.js';
import { baseAgentCard } from '../../src/server/card.js';

const PAGE = 'http://127.0.0.1:1/agent/';
const card: AgentCard = baseAgentCard({ httpUrl: 'http://10.0.0.9:4000', version: 'test' });
const older: AgentCard = {
  ...card,
  supportedInterfaces: card.supportedInterfaces.filter((entry) => entry.protocolVersion !== '1.1'),
};

function taskJson(id: string, state: TaskState, generation: number): Record<string, unknown> {
  const task: Task = {
    id,
    contextId: 'c1',
    status: { state, message: undefined, timestamp: undefined },
    artifacts: [],
    history: [],
    metadata: {},
  };
  return { ...(Task.toJSON(task) as Record<string, unknown>), generation: String(generation) };
}

interface Asked {
  url: string;
  version: string | null;
  id: string;
  currentGeneration: string | undefined;
}

/** A fetch answering GetTask from `answer`, noting each call. */
function scripted(answer: (asked: Asked) => Promise<Record<string, unknown>> | Record<string, unknown>) {
  const asked: Asked[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as {
      id: string;
      method: string;
      params: { id: string; currentGeneration?: string };
    };
    assert.equal(body.method, 'GetTask');
    const call = {
      url: String(input),
      version: new Headers(init?.headers).get('a2a-version'),
      id: body.params.id,
      currentGeneration: body.params.currentGeneration,
    };
    asked.push(call);
    const result = await answer(call);
    return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }), {
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof fetch;
  return { asked, fetchImpl };
}

const noClient = {
  getTask: () => assert.fail('the SDK client is not asked when the agent speaks 1.1'),
} as unknown as Client;

describe("the page's waits for a sub-task (issue 36)", () => {
  it('a card that lists 1.1: GetTask waits past the generation last seen, beside the page, and the end is seen', async () => {
    const generations = [4, 5, 6];
    const { asked, fetchImpl } = scripted(() => {
      const generation = generations.shift()!;
      return taskJson(
        'sub-1',
        generation < 6 ? TaskState.TASK_STATE_WORKING : TaskState.TASK_STATE_COMPLETED,
        generation,
      );
    });
    const waitPast = waitPastFor(card, PAGE, fetchImpl);
    assert.ok(waitPast);
    const states: (TaskState | undefined)[] = [];
    await watchSubtask(noClient, waitPast, 'sub-1', (state) => states.push(state));
    assert.deepEqual(states, [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
    // The first read is answered at once; each next waits past the generation the one before said.
    assert.deepEqual(
      asked.map((call) => call.currentGeneration),
      [undefined, '4', '5'],
    );
    for (const call of asked) {
      assert.equal(call.url, 'http://127.0.0.1:1/agent/a2a/jsonrpc', 'same origin as the page (its CSP)');
      assert.equal(call.version, '1.1');
      assert.equal(call.id, 'sub-1');
    }
  });

  it('a card without 1.1: no 1.1 call; the SDK client polls GetTask', async () => {
    assert.equal(
      waitPastFor(older, PAGE, () => assert.fail('no 1.1 call')),
      undefined,
    );
    const states = [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED];
    const asked: unknown[] = [];
    const client = {
      getTask: async (params: { id: string; historyLength?: number }) => {
        asked.push(params);
        const state = states.shift()!;
        return { id: params.id, contextId: 'c1', status: { state }, artifacts: [], history: [], metadata: {} };
      },
    } as unknown as Client;
    const seen: (TaskState | undefined)[] = [];
    await watchSubtask(client, undefined, 'sub-2', (state) => seen.push(state));
    assert.deepEqual(seen, [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
    assert.deepEqual(asked, [
      { tenant: '', id: 'sub-2', historyLength: 0 },
      { tenant: '', id: 'sub-2', historyLength: 0 },
    ]);
  });

  it(`at most ${MAX_WAITING} GetTask calls wait at once: a further sub-task is polled meanwhile`, async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let thirdPolled: () => void = () => {};
    const polled = new Promise<void>((resolve) => (thirdPolled = resolve));
    const ended = new Set<string>();
    const { asked, fetchImpl } = scripted(async (call) => {
      if (call.currentGeneration !== undefined) {
        await released;
        ended.add(call.id);
        return taskJson(call.id, TaskState.TASK_STATE_COMPLETED, 2);
      }
      // The third's second read comes while the other two wait: it waits for none.
      if (asked.filter((a) => a.id === call.id).length > 1) {
        thirdPolled();
        await released;
        return taskJson(call.id, TaskState.TASK_STATE_COMPLETED, 2);
      }
      return taskJson(call.id, TaskState.TASK_STATE_WORKING, 1);
    });
    const waitPast = waitPastFor(card, PAGE, fetchImpl)!;
    const watches = ['a', 'b', 'c'].map((id) => watchSubtask(noClient, waitPast, id, () => {}));
    await polled;
    const waiting = asked.filter((call) => call.currentGeneration !== undefined);
    assert.equal(waiting.length, MAX_WAITING);
    assert.equal(new Set(waiting.map((call) => call.id)).size, MAX_WAITING);
    release();
    await Promise.all(watches);
    assert.equal(ended.size, MAX_WAITING);
  });
});
