import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { GENERATION_KEY, JSONRPC_PATH, STREAM_RESUME_EXTENSION_URI } from '../../src/wire.js';
import {
  collect,
  generationIn,
  sendStream,
  startTestHarness,
  TRANSPORTS,
  type TestHarness,
  type TransportName,
} from './support.js';

function kindOf(event: StreamResponse): string {
  const payload = event.payload;
  if (payload?.$case === 'statusUpdate') return `status ${TaskState[payload.value.status!.state]}`;
  return payload?.$case ?? 'none';
}

const REPLY = 'one two three four five six seven eight';

describe('stream resume (issue 24)', () => {
  let h: TestHarness;
  const clients = new Map<TransportName, Client>();

  before(async () => {
    h = await startTestHarness({ script: { reply: REPLY } });
    for (const transport of TRANSPORTS) clients.set(transport, await h.client(transport));
  });
  after(async () => {
    await h?.close();
  });

  /** A whole streamed turn, as its client saw it. */
  async function wholeTurn(client: Client): Promise<StreamResponse[]> {
    return collect(sendStream(client, 'tell me'));
  }

  it('issue 24: every event of a stream carries its generation, one more than the event before it; GetTask carries the last', async () => {
    const client = clients.get('JSONRPC')!;
    const events = await wholeTurn(client);
    const generations = events.map(generationIn);
    assert.equal(generations[0], 1, 'the task event of a new task is generation 1');
    for (let i = 1; i < generations.length; i++)
      assert.equal(generations[i], generations[i - 1]! + 1, `dense: ${generations.join(',')}`);
    const taskId = (events[0]!.payload!.value as { id: string }).id;
    const task = await client.getTask({ tenant: '', id: taskId });
    assert.equal(task.metadata?.[GENERATION_KEY], generations.at(-1));
  });

  it('issue 24: the card declares the stream-resume extension', async () => {
    const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
    const entry = card.capabilities.extensions.find((e: { uri: string }) => e.uri === STREAM_RESUME_EXTENSION_URI);
    assert.deepEqual(entry?.params, { metadataKey: GENERATION_KEY });
  });

  it('issue 24: on SSE each event has its generation as its id', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
    });
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(
        `${h.harness.url}${JSONRPC_PATH}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'a2a-version': '1.0' },
        },
        (res) => {
          let all = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (all += chunk));
          res.on('end', () => resolve(all));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    const events = text.split('\n\n').filter((block) => block.trim());
    assert.ok(events.length > 3);
    for (const [i, block] of events.entries()) {
      const [idLine, dataLine] = block.split('\n');
      assert.equal(idLine, `id: ${i + 1}`, block.slice(0, 200));
      const json = JSON.parse(dataLine!.slice('data: '.length));
      const value = Object.values(json.result as Record<string, { metadata: Record<string, unknown> }>)[0]!;
      assert.equal(value.metadata[GENERATION_KEY], i + 1);
    }
  });

  for (const transport of TRANSPORTS) {
    it(`issue 24: ${transport}: a stream cut after any event resumes with Last-Event-ID, and the two halves join up to the whole turn, in order, none missing, none twice`, async () => {
      const client = clients.get(transport)!;
      const whole = await wholeTurn(client);
      const taskId = (whole[0]!.payload!.value as { id: string }).id;
      const contextId = (whole[0]!.payload!.value as { contextId: string }).contextId;
      // A second turn on the same task, cut after each of its events in turn.
      const second = await collect(sendStream(client, 'again', { taskId, contextId }));
      const all = [...whole, ...second];
      // Cut after each event but the last (after it, there is nothing to resume: the turn is over).
      for (let cut = 1; cut < all.length; cut++) {
        const seen = all.slice(0, cut);
        const last = generationIn(seen.at(-1)!);
        const [snapshot, ...rest] = await collect(
          client.resubscribeTask({ tenant: '', id: taskId }, { serviceParameters: { 'Last-Event-ID': String(last) } }),
        );
        // The Task first (A2A 1.0, 3.1.6), as it stands; then the events after the cut, to where a
        // stream ends: the next final status.
        assert.equal(snapshot!.payload?.$case, 'task');
        assert.equal(generationIn(snapshot!), generationIn(all.at(-1)!));
        const end = all.findIndex((event, i) => i >= cut && endsStream(event));
        const expected = all.slice(0, end + 1).map(generationIn);
        assert.deepEqual(
          [...seen, ...rest].map(generationIn),
          expected,
          `cut after ${cut}: ${rest.map(kindOf).join(', ')}`,
        );
      }
    });
  }

  it('issue 24: without Last-Event-ID, SubscribeToTask on an ended task is refused; with one, the missed events are replayed and the stream closes', async () => {
    const client = clients.get('HTTP+JSON')!;
    const events = await wholeTurn(client);
    const taskId = (events[0]!.payload!.value as { id: string }).id;
    const last = generationIn(events.at(-1)!);
    await client.cancelTask({ tenant: '', id: taskId, metadata: {} });
    await assert.rejects(collect(client.resubscribeTask({ tenant: '', id: taskId })), /terminal state/);
    const replayed = await collect(
      client.resubscribeTask({ tenant: '', id: taskId }, { serviceParameters: { 'Last-Event-ID': String(last) } }),
    );
    assert.deepEqual(replayed.map(kindOf), ['task', 'status TASK_STATE_CANCELED']);
    assert.deepEqual(replayed.map(generationIn), [last + 1, last + 1]);
  });

  it('issue 24: a Last-Event-ID beyond the task is a plain subscribe: the Task, then what comes next', async () => {
    const client = clients.get('GRPC')!;
    const events = await wholeTurn(client);
    const taskId = (events[0]!.payload!.value as { id: string }).id;
    const beyond = generationIn(events.at(-1)!) + 50;
    const stream = client.resubscribeTask(
      { tenant: '', id: taskId },
      { serviceParameters: { 'last-event-id': String(beyond) } },
    );
    const first = await stream.next();
    await stream.return(undefined);
    assert.equal(first.value?.payload?.$case, 'task');
    assert.equal(generationIn(first.value!), beyond - 50);
  });
});

/** A status that ends a stream: the task waits for input or has ended. */
function endsStream(event: StreamResponse): boolean {
  if (event.payload?.$case !== 'statusUpdate') return false;
  const state = event.payload.value.status?.state;
  return state !== TaskState.TASK_STATE_WORKING && state !== TaskState.TASK_STATE_SUBMITTED;
}
