/**
 * Health checks and the drain before a stop (docs/operations.md): `/healthz` and `/readyz`
 * answer without a token; once `close()` begins (SIGTERM), `/readyz` answers 503 at once, a new
 * message is refused retryably on every transport while a command is still answered, a
 * subscription on an idle task ends at once, and the running turn gets `drainTimeoutMs` to
 * finish with its whole reply; past it, or once the wait is skipped (a second signal), it ends
 * as interrupted.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { JSONRPC_PATH } from '../../src/wire.js';
import { nextMatching, within } from '../support/wait.js';
import {
  assertRetryable,
  collect,
  send,
  sendStream,
  startTestHarness,
  textOf,
  TRANSPORTS,
  type TestHarness,
} from './support.js';

const REPLY = 'one two three four five';
const TOKEN = 'drain-test-token';
const AS_ALICE = { authorization: `Bearer ${TOKEN}` };
/** Longer than any test: the drain waits for the turn, which the test lets go. */
const LONG_DRAIN_MS = 600_000;

let h: TestHarness | undefined;
let release: () => void = () => undefined;

afterEach(async () => {
  release();
  await h?.close();
  h = undefined;
});

/** A harness whose fixture model holds every reply to "hold me" after its first chunk, until `release()`. */
async function start(drainTimeoutMs: number): Promise<TestHarness> {
  const held = new Promise<void>((resolve) => (release = resolve));
  h = await startTestHarness({
    config: { drainTimeoutMs },
    script: {
      reply: REPLY,
      hold: (body) =>
        JSON.stringify(body?.messages ?? []).includes('hold me') ? { afterChunks: 1, until: held } : undefined,
    },
    harness: { auth: { tokens: new Map([[TOKEN, 'alice']]) } },
  });
  return h;
}

/** A turn whose reply is held; resolves once the model is answering it, with its task id and the rest of its stream. */
async function heldTurn(client: Client) {
  const stream = sendStream(client, 'hold me');
  let taskId = '';
  await nextMatching('the held turn streaming', stream, (event: StreamResponse) => {
    if (event.payload?.$case === 'task') taskId = event.payload.value.id;
    return event.payload?.$case === 'artifactUpdate';
  });
  return { taskId, stream };
}

function lastStatus(events: StreamResponse[]) {
  const last = events.at(-1)?.payload;
  assert.equal(last?.$case, 'statusUpdate', 'the stream ends with a status');
  return last.value.status;
}

async function probe(url: string, path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${url}${path}`);
  return { status: response.status, body: await response.json() };
}

describe('health checks and the drain before a stop', () => {
  it('/healthz and /readyz answer 200 without a token, where the A2A routes need one', async () => {
    const { harness } = await start(0);
    assert.deepEqual(await probe(harness.url, '/healthz'), { status: 200, body: { status: 'ok' } });
    assert.deepEqual(await probe(harness.url, '/readyz'), { status: 200, body: { status: 'ready' } });
    const a2a = await fetch(`${harness.url}${JSONRPC_PATH}`, { method: 'POST', body: '{}' });
    assert.equal(a2a.status, 401, 'the A2A routes still need the token');
  });

  it('drainTimeoutMs: while draining, /readyz answers 503, new turns are refused retryably, a command answers, an idle subscription ends, and the running turn finishes with its whole reply', async () => {
    const test = await start(LONG_DRAIN_MS);
    const client = await test.client('JSONRPC', AS_ALICE);
    const idle = await send(client, 'an idle task');
    const subscription = client.resubscribeTask({ tenant: '', id: idle.id });
    assert.equal((await subscription.next()).value?.payload?.$case, 'task', 'subscribed');
    const turn = await heldTurn(client);

    const closing = test.harness.close();
    assert.deepEqual(await probe(test.harness.url, '/readyz'), {
      status: 503,
      body: { status: 'unavailable', reason: 'draining' },
    });
    assert.deepEqual(await probe(test.harness.url, '/healthz'), { status: 200, body: { status: 'ok' } });
    assert.deepEqual(await within('the idle subscription ending', collect(subscription)), [], 'ended, cleanly');

    for (const transport of TRANSPORTS) {
      const other = await test.client(transport, AS_ALICE);
      const refusals: unknown[] = [];
      await send(other, 'a new turn').then(
        () => assert.fail(`a new turn was accepted over ${transport}`),
        (error) => refusals.push(error),
      );
      await sendStream(other, 'a new stream', { taskId: idle.id })
        .next()
        .then(
          () => assert.fail(`a new stream was accepted over ${transport}`),
          (error) => refusals.push(error),
        );
      for (const error of refusals) {
        assert.match((error as Error).message, /shutting down and starts no new turn/);
        assertRetryable(transport, error);
      }
    }
    const status = await send(client, '/status', { taskId: turn.taskId });
    assert.match(textOf(status.status?.message), /Turn running: yes/, 'a command is still answered');

    release();
    const events = await collect(turn.stream);
    assert.equal(lastStatus(events)?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(lastStatus(events)?.message), REPLY, 'the whole reply');
    await within('the stop', closing);
  });

  it('drainTimeoutMs: a turn still running past it ends as interrupted, its end stored and streamed', async () => {
    const test = await start(1);
    const turn = await heldTurn(await test.client('GRPC', AS_ALICE));
    await within('the stop', test.harness.close());
    const events = await collect(turn.stream);
    assert.equal(lastStatus(events)?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(textOf(lastStatus(events)?.message), /interrupted/);
  });

  it('a second stop signal skips the wait: the running turn ends as interrupted now', async () => {
    const test = await start(LONG_DRAIN_MS);
    assert.equal(test.harness.skipDrainWait(), false, 'nothing to skip before a stop');
    const turn = await heldTurn(await test.client('HTTP+JSON', AS_ALICE));
    const closing = test.harness.close();
    assert.equal(test.harness.skipDrainWait(), true);
    const events = await collect(turn.stream);
    assert.match(textOf(lastStatus(events)?.message), /interrupted/);
    await within('the stop', closing);
  });
});
