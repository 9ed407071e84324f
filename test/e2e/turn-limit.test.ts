import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { RETRY_AFTER_SECONDS } from '../../src/server/unavailable.js';
import { REST_PATH, SUBTASKS_KEY } from '../../src/wire.js';
import { nextMatching, poll, within } from '../support/wait.js';
import {
  assertRetryable,
  collect,
  send,
  startTestHarness,
  textOf,
  TRANSPORTS,
  type TestHarness,
  sendStream,
} from './support.js';

/**
 * The bound on turns in flight (`maxTurnsInFlight`, src/runtime/turn/turn-limit.ts): at 2, with two
 * turns held by the fixture model, a third is refused on every transport in its retryable form,
 * a command is still answered, a sub-task is not started, and a turn is accepted again once one
 * of the two has stored its end.
 */
const LIMIT = 2;
const holds = new Map<string, Promise<void>>();
const letGo = new Map<string, () => void>();

/** Holds the reply to the message `text` after its first chunk until `release(text)`. */
function holdReplyTo(text: string): void {
  holds.set(text, new Promise<void>((resolve) => letGo.set(text, resolve)));
}

function lastUserText(body: any): string {
  const user = [...(body?.messages ?? [])].reverse().find((m: any) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
}

let h: TestHarness;

before(async () => {
  h = await startTestHarness({
    config: { maxTurnsInFlight: LIMIT },
    script: {
      reply: 'one two three four five',
      hold: (body) => {
        const until = holds.get(lastUserText(body));
        return until && { afterChunks: 1, until };
      },
    },
  });
});

after(async () => {
  for (const release of letGo.values()) release();
  await h?.close();
});

/** Starts a held turn on a new task; resolves with its task id and the rest of its stream, once the model is answering. */
async function heldTurn(text: string) {
  holdReplyTo(text);
  const client = await h.client('JSONRPC');
  const stream = sendStream(client, text);
  let taskId = '';
  await nextMatching(`the turn "${text}" streaming`, stream, (event: StreamResponse) => {
    if (event.payload?.$case === 'task') taskId = event.payload.value.id;
    return event.payload?.$case === 'artifactUpdate';
  });
  return { taskId, stream };
}

describe(`maxTurnsInFlight: ${LIMIT} turns held`, () => {
  let first: Awaited<ReturnType<typeof heldTurn>>;

  before(async () => {
    first = await heldTurn('held one');
    await heldTurn('held two');
  });

  for (const transport of TRANSPORTS) {
    it(`a third turn is refused over ${transport}, retryably and saying why, on SendMessage and SendStreamingMessage`, async () => {
      const client = await h.client(transport);
      const refusals: unknown[] = [];
      await send(client, 'a third turn').then(
        () => assert.fail('a third turn was accepted'),
        (error) => refusals.push(error),
      );
      const stream = sendStream(client, 'a third stream');
      await stream.next().then(
        () => assert.fail('a third stream was accepted'),
        (error) => refusals.push(error),
      );
      for (const error of refusals) {
        assert.match(
          (error as Error).message,
          new RegExp(`at its limit of ${LIMIT} running turns\\. Send the message again`),
        );
        assertRetryable(transport, error);
      }
    });
  }

  it('HTTP+JSON: 503 with Retry-After, and the status name UNAVAILABLE in the body (AIP-193)', async () => {
    const response = await fetch(`${h.harness.url}${REST_PATH}/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'raw third' }] } }),
    });
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), String(RETRY_AFTER_SECONDS));
    const body = (await response.json()) as any;
    assert.equal(body.error.code, 503);
    assert.equal(body.error.status, 'UNAVAILABLE');
  });

  it('a command is still answered', async () => {
    const client = await h.client('HTTP+JSON');
    const replied = await within('a command at the limit', send(client, '/status', { taskId: first.taskId }));
    assert.equal(replied.status?.state, TaskState.TASK_STATE_WORKING);
    assert.match(textOf(replied.status?.message), /Turn running: yes/);
  });

  it('a sub-task is not started, nor stored: the command says so in the conversation', async () => {
    const client = await h.client('GRPC');
    const replied = await send(client, '/spawn summarise the discussion', { taskId: first.taskId });
    const reply = replied.status!.message!;
    assert.match(textOf(reply), new RegExp(`sub-task was not started: .*limit of ${LIMIT} running turns`));
    assert.deepEqual(reply.metadata, { command: 'spawn' }, 'no task_ref: no sub-task');
    const parent = await client.getTask({ tenant: '', id: first.taskId, historyLength: 0 });
    assert.equal(parent.metadata?.[SUBTASKS_KEY], undefined, 'the parent has no sub-task');
  });

  it('once a turn has stored its end, a refused message sent again (same messageId) is accepted, and runs once', async () => {
    const client = await h.client('JSONRPC');
    const messageId = randomUUID();
    await assert.rejects(send(client, 'a turn after one ended', { messageId }), /at its limit/);
    letGo.get('held one')!();
    const events = await collect(first.stream);
    assert.equal((events.at(-1)!.payload!.value as any).status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    // The place is given back just after the stream's last event reaches its client: until then, retried as a client would.
    const task = await poll('the message accepted once a turn has ended', () =>
      send(client, 'a turn after one ended', { messageId }).catch((error) => {
        if (/at its limit/.test((error as Error).message)) return undefined;
        throw error;
      }),
    );
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(task.status?.message), 'one two three four five');
    const stored = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    assert.deepEqual(
      stored.history.filter((m) => m.messageId === messageId).map(textOf),
      ['a turn after one ended'],
      'the refused message left nothing behind: it is stored once, by the turn that ran it',
    );
  });
});
