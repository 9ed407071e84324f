/**
 * The while-busy extension (spec/while-busy-extension-v1.md): a message sent while a turn runs
 * on its task is refused (`reject`, the default), queued behind it (`enqueue`), or queued first
 * with the running turn stopped (`interrupt`). The fixture model holds a reply whose prompt says
 * "hold" until the test lets it go, so every message here is sent while a turn surely runs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  QUEUED_KEY,
  SUBTASK_NOTE_KEY,
  WHILE_BUSY_EXTENSION_URI,
  WHILE_BUSY_KEY,
  type QueuedNote,
} from '../../src/wire.js';
import { INTERRUPTED_TEXT, STOPPED_MARK } from '../../src/runtime/turn/turn-end.js';
import { lastMessage } from '../fixtures/model-server.js';
import { nextMatching, poll, within } from '../support/wait.js';
import {
  collect,
  send,
  sendStream,
  startTestHarness,
  textOf,
  TRANSPORTS,
  userMessage,
  type TestHarness,
} from './support.js';

const schema = JSON.parse(
  readFileSync(new URL('../../spec/while-busy-extension-v1.schema.json', import.meta.url), 'utf8'),
);
const ajv = new Ajv2020({ strict: false });
const validParams = ajv.compile(schema);
const validNote = ajv.compile({ $ref: `${schema.$id}#/$defs/Queued` });

let h: TestHarness;
/** Lets go of the replies held so far; each test holds its own. */
let held = deferred();

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

before(async () => {
  h = await startTestHarness({
    script: {
      reply: (body) => `re: ${lastMessage(body).content} alpha beta gamma`,
      hold: (body) =>
        lastMessage(body).content.includes('hold') ? { afterChunks: 2, until: held.promise } : undefined,
    },
    config: { queue: { maxPerTask: 2 } },
  });
});

after(async () => {
  held.resolve();
  await h?.close();
});

/** A streamed message on the task, with `tiny-harness/while-busy` set when `whileBusy` is. */
function sendWhileBusy(client: Client, text: string, taskId: string, whileBusy?: unknown, messageId = randomUUID()) {
  const message = userMessage(text, { taskId, messageId });
  if (whileBusy !== undefined) message.metadata = { [WHILE_BUSY_KEY]: whileBusy };
  return client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} });
}

/** Starts a held turn on a new task; resolves once its reply has begun, with the task id and its stream. */
async function heldTurn(client: Client, text = 'hold on') {
  held = deferred();
  const stream = sendStream(client, `${text} ${randomUUID()}`);
  const first = await nextMatching('the turn task', stream, (e) => e.payload?.$case === 'task');
  await nextMatching('the first chunk', stream, (e) => e.payload?.$case === 'artifactUpdate');
  return { taskId: (first.payload!.value as Task).id, stream };
}

/** The first event of a queued message's stream: the Task with its place. */
async function queuedPlace(
  stream: AsyncGenerator<StreamResponse, void, undefined>,
): Promise<{ task: Task; note: QueuedNote }> {
  const first = await within('the queued Task', stream.next());
  assert.equal(first.value?.payload?.$case, 'task', 'a queued message is answered with the Task first');
  const task = first.value.payload.value as Task;
  const note = task.metadata?.[QUEUED_KEY] as QueuedNote;
  assert.ok(validNote(note), `the note follows the schema: ${JSON.stringify(validNote.errors)}`);
  return { task, note };
}

const finalStatus = (events: StreamResponse[]) => {
  const last = events.at(-1)?.payload;
  assert.equal(last?.$case, 'statusUpdate', 'the stream ends with a status');
  return last.value as { status?: { state: TaskState; message?: any } };
};

const taskEventOf = (events: StreamResponse[]) =>
  events.find((e) => e.payload?.$case === 'task')?.payload?.value as Task;

describe('while-busy extension', () => {
  it('while-busy: the card declares the extension, its params as the schema says', async () => {
    const card = await (await h.client('JSONRPC')).getAgentCard();
    const entry = card.capabilities?.extensions.find((e) => e.uri === WHILE_BUSY_EXTENSION_URI);
    assert.ok(entry, 'declared');
    assert.equal(entry.params?.maxPerTask, 2);
    assert.ok(validParams(entry.params), JSON.stringify(validParams.errors));
  });

  for (const transport of TRANSPORTS) {
    it(`while-busy enqueue (${transport}): two messages queued during a turn run after it, in order, each stream the queued Task then its own turn; the history holds all`, async () => {
      const client = await h.client(transport);
      const running = await heldTurn(client);
      const second = sendWhileBusy(client, 'second message', running.taskId, 'enqueue', randomUUID());
      const a = await queuedPlace(second);
      assert.equal(a.note.position, 1);
      assert.equal(a.task.id, running.taskId);
      assert.equal(a.task.status?.state, TaskState.TASK_STATE_WORKING, 'the Task as stored: its turn runs');
      const third = sendWhileBusy(client, 'third message', running.taskId, 'enqueue');
      const b = await queuedPlace(third);
      assert.equal(b.note.position, 2);
      held.resolve();
      await collect(running.stream);
      const secondEvents = await collect(second);
      const thirdEvents = await collect(third);
      assert.equal(taskEventOf(secondEvents).history.at(-1)?.messageId, a.note.messageId, "the second's own turn");
      assert.equal(taskEventOf(thirdEvents).history.at(-1)?.messageId, b.note.messageId, "the third's own turn");
      assert.equal(textOf(finalStatus(secondEvents).status?.message), 're: second message alpha beta gamma');
      assert.equal(finalStatus(thirdEvents).status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const task = await client.getTask({ tenant: '', id: running.taskId, historyLength: undefined });
      const said = task.history.map((m) => textOf(m));
      assert.deepEqual(said.slice(-4), [
        'second message',
        're: second message alpha beta gamma',
        'third message',
        're: third message alpha beta gamma',
      ]);
    });
  }

  it("while-busy: GetTask's history is the order things happened: each turn's reply right after its message, the commands and the sub-task note sent while it waited or ran after it", async () => {
    const client = await h.client('JSONRPC');
    const running = await heldTurn(client, 'hold the first');
    const queued = sendWhileBusy(client, 'hold the queued one', running.taskId, 'enqueue');
    await queuedPlace(queued);
    // While the queued message waits.
    await send(client, '/model large', { taskId: running.taskId });
    // The first turn goes on; the queued one's is held in its turn.
    const first = held;
    held = deferred();
    first.resolve();
    await nextMatching('the queued turn writing', queued, (e) => e.payload?.$case === 'artifactUpdate');
    // While it runs: a sub-task, whose note comes before the held turn ends.
    await send(client, '/spawn a side job', { taskId: running.taskId });
    await nextMatching(
      'the sub-task note',
      queued,
      (e) =>
        e.payload?.$case === 'statusUpdate' &&
        e.payload.value.status?.message?.metadata?.[SUBTASK_NOTE_KEY] !== undefined,
    );
    held.resolve();
    await collect(queued);
    await collect(running.stream);
    const task = await client.getTask({ tenant: '', id: running.taskId, historyLength: undefined });
    const label = (text: string) =>
      text.startsWith('Started sub-task')
        ? '(the /spawn reply)'
        : text.startsWith('Sub-task')
          ? '(the note)'
          : text.startsWith('This task now uses')
            ? '(the /model reply)'
            : text.replace(/ [0-9a-f-]{36}/, '');
    assert.deepEqual(
      task.history.map((m) => label(textOf(m))),
      [
        'hold the first',
        're: hold the first alpha beta gamma',
        '/model large',
        '(the /model reply)',
        'hold the queued one',
        're: hold the queued one alpha beta gamma',
        '/spawn a side job',
        '(the /spawn reply)',
        '(the note)',
      ],
    );
  });

  it('while-busy interrupt: the running turn ends keeping its partial reply, then the message runs', async () => {
    const client = await h.client('JSONRPC');
    const aborted = h.model.aborted;
    const running = await heldTurn(client);
    const urgent = sendWhileBusy(client, 'urgent message', running.taskId, 'interrupt');
    const { note } = await queuedPlace(urgent);
    assert.equal(note.position, 1);
    const stopped = finalStatus(await collect(running.stream));
    assert.equal(stopped.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.ok(
      textOf(stopped.status?.message).endsWith(STOPPED_MARK),
      'stopped as /stop stops it, the partial reply kept',
    );
    await h.model.waitForAborted(aborted + 1);
    const events = await collect(urgent);
    assert.equal(textOf(finalStatus(events).status?.message), 're: urgent message alpha beta gamma');
  });

  it('while-busy interrupt goes before the messages queued already', async () => {
    const client = await h.client('JSONRPC');
    const running = await heldTurn(client);
    const later = sendWhileBusy(client, 'later message', running.taskId, 'enqueue');
    await queuedPlace(later);
    const urgent = sendWhileBusy(client, 'urgent first', running.taskId, 'interrupt');
    assert.equal((await queuedPlace(urgent)).note.position, 1);
    await collect(running.stream);
    await collect(urgent);
    await collect(later);
    const task = await client.getTask({ tenant: '', id: running.taskId, historyLength: undefined });
    const users = task.history.filter((m) => m.role === 1).map((m) => textOf(m));
    assert.deepEqual(users.slice(-2), ['urgent first', 'later message']);
  });

  it('while-busy reject (and no key): refused as before; any other value: params_invalid naming the allowed values', async () => {
    const client = await h.client('JSONRPC');
    const running = await heldTurn(client);
    const busy = (error: unknown) =>
      error instanceof UnsupportedOperationError && /still being written/.test(error.message);
    await assert.rejects(collect(sendWhileBusy(client, 'no key', running.taskId)), busy);
    await assert.rejects(collect(sendWhileBusy(client, 'reject', running.taskId, 'reject')), busy);
    await assert.rejects(
      collect(sendWhileBusy(client, 'bogus', running.taskId, 'later')),
      (error) => error instanceof RequestMalformedError && /"reject", "enqueue", "interrupt"/.test(error.message),
    );
    // A command ignores the key.
    const status = await h.client('JSONRPC');
    const message = userMessage('/status', { taskId: running.taskId });
    message.metadata = { [WHILE_BUSY_KEY]: 'nonsense' };
    const reply = (await status.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} })) as Task;
    assert.match(textOf(reply.status?.message), /Turn running: yes/);
    held.resolve();
    await collect(running.stream);
  });

  it('while-busy: /status lists the queue; /stop keeps it and the next message runs', async () => {
    const client = await h.client('JSONRPC');
    const running = await heldTurn(client);
    const queued = sendWhileBusy(
      client,
      'queued behind the stop with several more words than shown',
      running.taskId,
      'enqueue',
    );
    await queuedPlace(queued);
    const status = await send(client, '/status', { taskId: running.taskId });
    assert.match(
      textOf(status.status?.message),
      /Queued messages: 1\n {2}1\. queued behind the stop with several more words …/,
    );
    await send(client, '/stop', { taskId: running.taskId });
    await collect(running.stream);
    const events = await collect(queued);
    assert.equal(finalStatus(events).status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const after = await send(client, '/status', { taskId: running.taskId });
    assert.match(textOf(after.status?.message), /Queued messages: 0/);
  });

  it('while-busy: CancelTask drops the queue; the waiting stream ends with the canceled status', async () => {
    const client = await h.client('JSONRPC');
    const running = await heldTurn(client);
    const queued = sendWhileBusy(client, 'never runs', running.taskId, 'enqueue');
    await queuedPlace(queued);
    await client.cancelTask({ tenant: '', id: running.taskId, metadata: {} });
    const events = await collect(queued);
    assert.equal(finalStatus(events).status?.state, TaskState.TASK_STATE_CANCELED);
    const requests = h.chatRequests().filter((body) => lastMessage(body).content === 'never runs');
    assert.equal(requests.length, 0, 'the queued message never reached the model');
  });

  it('while-busy: a full queue refuses one more clearly (queue_full)', async () => {
    const client = await h.client('JSONRPC');
    const running = await heldTurn(client);
    const one = sendWhileBusy(client, 'one', running.taskId, 'enqueue');
    const two = sendWhileBusy(client, 'two', running.taskId, 'enqueue');
    await queuedPlace(one);
    await queuedPlace(two);
    await assert.rejects(
      collect(sendWhileBusy(client, 'three', running.taskId, 'enqueue')),
      (error) => error instanceof UnsupportedOperationError && /queue\.maxPerTask/.test(error.message),
    );
    held.resolve();
    await collect(running.stream);
    await collect(one);
    await collect(two);
  });

  it('while-busy: a resend of a queued message is not queued twice; it follows the message to its turn', async () => {
    const client = await h.client('JSONRPC');
    const running = await heldTurn(client);
    const messageId = randomUUID();
    const first = sendWhileBusy(client, 'sent twice', running.taskId, 'enqueue', messageId);
    assert.equal((await queuedPlace(first)).note.position, 1);
    const again = sendWhileBusy(client, 'sent twice', running.taskId, 'enqueue', messageId);
    assert.equal((await queuedPlace(again)).note.position, 1, 'the same place: not queued again');
    held.resolve();
    await collect(running.stream);
    const events = await collect(again);
    assert.equal(taskEventOf(events).history.at(-1)?.messageId, messageId);
    await collect(first);
    const task = await client.getTask({ tenant: '', id: running.taskId, historyLength: undefined });
    assert.equal(task.history.filter((m) => m.messageId === messageId).length, 1);
  });

  it('while-busy: a blocking SendMessage waits for the queued turn; returnImmediately answers with the queued Task', async () => {
    const client = await h.client('JSONRPC');
    const running = await heldTurn(client);
    const message = userMessage('quick one', { taskId: running.taskId });
    message.metadata = { [WHILE_BUSY_KEY]: 'enqueue' };
    const immediate = (await client.sendMessage({
      tenant: '',
      message: { ...message, messageId: randomUUID() },
      configuration: {
        acceptedOutputModes: [],
        historyLength: undefined,
        returnImmediately: true,
        taskPushNotificationConfig: undefined,
      },
      metadata: {},
    })) as Task;
    assert.equal((immediate.metadata?.[QUEUED_KEY] as QueuedNote).position, 1);
    const blocking = client.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} });
    held.resolve();
    const answer = (await within('the blocking answer', blocking)) as Task;
    assert.equal(textOf(answer.status?.message), 're: quick one alpha beta gamma');
    await collect(running.stream);
  });
});

describe('while-busy across a restart', () => {
  it('while-busy: a queue is kept in the store; the next start runs it after recovering the interrupted turn', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-queue-restart-'));
    const started: TestHarness[] = [];
    t.after(async () => {
      for (const one of started) await one.close().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    });
    const never = new Promise<void>(() => {});
    const script = {
      reply: (body: any) => `re: ${lastMessage(body).content}`,
      hold: (body: any) => (lastMessage(body).content.includes('hold') ? { afterChunks: 1, until: never } : undefined),
    };
    const first = await startTestHarness({ dataDir, script });
    started.push(first);
    const client = await first.client('JSONRPC');
    const stream = sendStream(client, 'hold until the restart');
    const opening = await nextMatching('the turn task', stream, (e) => e.payload?.$case === 'task');
    const taskId = (opening.payload!.value as Task).id;
    await first.model.waitForRequest((r) => lastMessage(r.body).content.includes('hold'));
    const queued = sendWhileBusy(client, 'waits for the restart', taskId, 'enqueue');
    await queuedPlace(queued);
    await first.close();
    const second = await startTestHarness({ dataDir, script });
    started.push(second);
    const again = await second.client('JSONRPC');
    const task = await poll('the queued message answered after the restart', async () => {
      const read = await again.getTask({ tenant: '', id: taskId, historyLength: undefined });
      return textOf(read.history.at(-1)) === 're: waits for the restart' && read;
    });
    const said = task.history.map((m) => textOf(m));
    assert.ok(said.includes(INTERRUPTED_TEXT), 'the turn cut by the stop was recovered first');
    assert.equal(said.at(-2), 'waits for the restart');
  });
});

describe('while-busy with bearer tokens', () => {
  it("while-busy: a queued message runs as the user who queued it; another user's message finds no task, queued or not", async (t) => {
    const ALICE = 'alice-token-0123456789abcdef';
    const BOB = 'bob-token-0123456789abcdef00';
    const gate = deferred();
    const users = await startTestHarness({
      script: {
        reply: (body) => `re: ${lastMessage(body).content}`,
        hold: (body) =>
          lastMessage(body).content.includes('hold') ? { afterChunks: 1, until: gate.promise } : undefined,
      },
      harness: {
        auth: {
          tokens: new Map([
            [ALICE, 'alice'],
            [BOB, 'bob'],
          ]),
        },
      },
    });
    t.after(async () => {
      gate.resolve();
      await users.close();
    });
    const alice = await users.client('JSONRPC', { authorization: `Bearer ${ALICE}` });
    const bob = await users.client('JSONRPC', { authorization: `Bearer ${BOB}` });
    const stream = sendStream(alice, 'hold a moment');
    const opening = await nextMatching('the turn task', stream, (e) => e.payload?.$case === 'task');
    const taskId = (opening.payload!.value as Task).id;
    await users.model.waitForRequest((r) => lastMessage(r.body).content.includes('hold'));
    const queued = sendWhileBusy(alice, 'alice queued this', taskId, 'enqueue');
    await queuedPlace(queued);
    const notFound = (error: any) => /not found/i.test(String(error?.message));
    await assert.rejects(collect(sendWhileBusy(bob, 'bob queues', taskId, 'enqueue')), notFound);
    await assert.rejects(collect(sendWhileBusy(bob, 'bob interrupts', taskId, 'interrupt')), notFound);
    await assert.rejects(collect(sendWhileBusy(bob, 'bob is refused', taskId)), notFound);
    gate.resolve();
    await collect(stream);
    const events = await collect(queued);
    assert.equal(textOf(finalStatus(events).status?.message), 're: alice queued this');
    const task = await alice.getTask({ tenant: '', id: taskId, historyLength: undefined });
    assert.equal(textOf(task.history.at(-1)), 're: alice queued this', "alice's task holds the queued turn");
  });
});
