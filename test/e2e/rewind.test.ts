/**
 * CMD-37: `/rewind [n]` and the `rollback` way of double-texting (spec/conversation-extension-v1.md,
 * spec/while-busy-extension-v1.md). What a rewind hides leaves GetTask, ListTasks, command answers
 * and the model's requests, and stays in the store. The fixture model holds a reply whose prompt
 * says "hold" until the test lets it go, so a turn surely runs while the test sends.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  CONVERSATION_EXTENSION_URI,
  QUEUED_KEY,
  REPLY_ERROR_KEY,
  rewindOf,
  WHILE_BUSY_EXTENSION_URI,
  WHILE_BUSY_KEY,
  type QueuedNote,
} from '../../src/wire.js';
import { DATABASE_FILE_NAME } from '../../src/store/index.js';
import { STOPPED_MARK } from '../../src/runtime/turn/turn-end.js';
import { lastMessage } from '../fixtures/model-server.js';
import { nextMatching, within } from '../support/wait.js';
import {
  collect,
  dataOf,
  send,
  sendStream,
  startTestHarness,
  textOf,
  TRANSPORTS,
  userMessage,
  type TestHarness,
} from './support.js';

const conversationSchema = JSON.parse(
  readFileSync(new URL('../../spec/conversation-extension-v1.schema.json', import.meta.url), 'utf8'),
);
const whileBusySchema = JSON.parse(
  readFileSync(new URL('../../spec/while-busy-extension-v1.schema.json', import.meta.url), 'utf8'),
);
const ajv = new Ajv2020({ strict: false });
ajv.addSchema(conversationSchema);
const valid = (def: string, value: unknown) => {
  const check = ajv.getSchema(`${conversationSchema.$id}#/$defs/${def}`)!;
  assert.ok(check(value), `${def} follows the schema: ${JSON.stringify(check.errors)}`);
};

let h: TestHarness;
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
  });
});

after(async () => {
  held.resolve();
  await h?.close();
});

const history = async (client: Client, taskId: string) =>
  (await client.getTask({ tenant: '', id: taskId, historyLength: undefined })).history;
const texts = (messages: readonly Message[]) => messages.map((m) => textOf(m));
const userTexts = (request: any): string[] =>
  request.messages.filter((m: any) => m.role === 'user').map((m: any) => String(m.content));
const requestEndingWith = (text: string) =>
  h
    .chatRequests()
    .filter((r: any) => lastMessage(r).content === text)
    .at(-1);

/** The task's messages as the store keeps them, read from the database file itself. */
function storedTexts(taskId: string): string[] {
  const db = new BetterSqlite3(join(h.dataDir, DATABASE_FILE_NAME), { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare('select message_json from task_messages where task_id = ? order by seq')
      .all(taskId) as Array<{ message_json: string }>;
    return rows.map((row) => {
      const message = JSON.parse(row.message_json);
      return (message.parts ?? []).map((p: any) => p.text ?? p.content?.value ?? '').join('');
    });
  } finally {
    db.close();
  }
}

/** A task holding three exchanges and a command between the first two. */
async function conversation(client: Client): Promise<{ taskId: string; ids: string[] }> {
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  const first = await send(client, 'first message\nwith a second line', { messageId: ids[0] });
  await send(client, '/status', { taskId: first.id });
  await send(client, 'second message', { taskId: first.id, messageId: ids[1] });
  await send(client, 'third message', { taskId: first.id, messageId: ids[2] });
  return { taskId: first.id, ids };
}

/** Starts a held turn on the task (a new one without); resolves once its reply has begun. */
async function heldTurn(client: Client, taskId?: string) {
  held = deferred();
  const stream = sendStream(client, `hold on ${randomUUID()}`, { taskId });
  const first = await nextMatching('the turn task', stream, (e) => e.payload?.$case === 'task');
  await nextMatching('the first chunk', stream, (e) => e.payload?.$case === 'artifactUpdate');
  return { taskId: (first.payload!.value as Task).id, stream };
}

function sendWhileBusy(client: Client, text: string, taskId: string, whileBusy: string, messageId = randomUUID()) {
  const message = userMessage(text, { taskId, messageId });
  message.metadata = { [WHILE_BUSY_KEY]: whileBusy };
  return client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} });
}

const finalStatus = (events: StreamResponse[]) => {
  const last = events.at(-1)?.payload;
  assert.equal(last?.$case, 'statusUpdate', 'the stream ends with a status');
  return last.value as { status?: { state: TaskState; message?: Message } };
};

describe('/rewind (CMD-37)', () => {
  it('CMD-37: the card declares the conversation extension, its params as the schema says', async () => {
    const card = await (await h.client('JSONRPC')).getAgentCard();
    const entry = card.capabilities?.extensions.find((e) => e.uri === CONVERSATION_EXTENSION_URI);
    assert.ok(entry, 'declared');
    assert.equal(entry.required, false);
    valid('Params', entry.params);
  });

  for (const transport of TRANSPORTS)
    it(`CMD-37: /rewind lists the user messages newest first, numbered, with previews, as text and data (${transport})`, async () => {
      const client = await h.client(transport);
      const { taskId, ids } = await conversation(client);
      const reply = (await send(client, '/rewind', { taskId })).status?.message;
      const data = dataOf(reply);
      valid('RewindListing', data);
      assert.deepEqual(data.points, [
        { n: 1, messageId: ids[2], preview: 'third message', text: 'third message' },
        { n: 2, messageId: ids[1], preview: 'second message', text: 'second message' },
        { n: 3, messageId: ids[0], preview: 'first message', text: 'first message\nwith a second line' },
      ]);
      assert.match(textOf(reply), /1\. third message\n.*2\. second message\n.*3\. first message\n/);
      assert.equal(data.points.length, 3, 'the /status and /rewind commands are not points');
    });

  it('CMD-37: /rewind n hides the n-th newest user message and what followed from GetTask, ListTasks, answers and the next model request; the store keeps them; a resend is not applied twice', async () => {
    const client = await h.client('JSONRPC');
    const { taskId, ids } = await conversation(client);
    const messageId = randomUUID();
    const answer = await send(client, '/rewind 2', { taskId, messageId });
    const reply = answer.status?.message;
    valid('Rewound', dataOf(reply));
    assert.deepEqual(dataOf(reply), { rewoundTo: { n: 2, messageId: ids[1], text: 'second message' }, hidden: 4 });
    assert.match(textOf(reply), /second message/, 'the text to put back in the input box');

    const visible = await history(client, taskId);
    // The first exchange and the /status exchange before point 2 stay; from point 2 on, only /rewind's own.
    const said = texts(visible).map((text) =>
      text.startsWith(`Task ${taskId}\nState:`) ? '(the /status reply)' : text,
    );
    assert.deepEqual(said, [
      'first message\nwith a second line',
      're: first message\nwith a second line alpha beta gamma',
      '/status',
      '(the /status reply)',
      '/rewind 2',
      'Rewound to before "second message"',
      textOf(reply),
    ]);
    const mark = rewindOf(visible[5]!);
    assert.ok(mark, 'the mark is shown');
    valid('RewindMark', mark);
    assert.equal(mark.to, ids[1]);
    assert.equal(mark.hidden.length, 4, 'the second and third messages and their replies');

    const listed = await client.listTasks({
      tenant: '',
      contextId: answer.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 50,
      pageToken: '',
      historyLength: 100,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    });
    const inList = listed.tasks.find((t) => t.id === taskId)!;
    assert.deepEqual(texts(inList.history), texts(visible), 'ListTasks shows what GetTask shows');
    const status = (await client.sendMessage({
      tenant: '',
      message: userMessage('/status', { taskId }),
      configuration: {
        acceptedOutputModes: [],
        historyLength: 100,
        returnImmediately: false,
        taskPushNotificationConfig: undefined,
      },
      metadata: {},
    })) as Task;
    assert.ok(!texts(status.history).includes('third message'), "a command's answer shows no hidden message");

    const subscription = client.resubscribeTask({ tenant: '', id: taskId });
    const opened = await within("the subscription's Task", subscription.next());
    await subscription.return(undefined);
    const snapshot = opened.value?.payload?.value as Task;
    assert.ok(!texts(snapshot.history).includes('third message'), 'a stream starts with the Task as GetTask shows it');

    await send(client, 'fourth message', { taskId });
    assert.deepEqual(userTexts(requestEndingWith('fourth message')), [
      'first message\nwith a second line',
      'fourth message',
    ]);

    const stored = storedTexts(taskId);
    for (const text of ['second message', 'third message', 're: third message alpha beta gamma'])
      assert.ok(stored.includes(text), `the store keeps "${text}"`);

    const again = await send(client, '/rewind 2', { taskId, messageId });
    assert.deepEqual(dataOf(again.status?.message), dataOf(reply), 'a resend is answered with the first reply');
    const after = await history(client, taskId);
    assert.ok(texts(after).includes('first message\nwith a second line'), 'point 2 was not rewound again');
    assert.equal(after.filter((m) => rewindOf(m)).length, 1, 'one mark');
  });

  it('CMD-37: /rewind is refused while a turn runs (turn_running), and hides nothing', async () => {
    const client = await h.client('JSONRPC');
    const running = await heldTurn(client);
    const reply = (await send(client, '/rewind 1', { taskId: running.taskId })).status?.message;
    assert.equal(dataOf(reply)?.[REPLY_ERROR_KEY], 'turn_running');
    assert.match(textOf(reply), /turn is running/);
    held.resolve();
    await collect(running.stream);
    const visible = await history(client, running.taskId);
    assert.ok(
      visible.every((m) => !rewindOf(m)),
      'no mark',
    );
    assert.ok(texts(visible)[0]!.startsWith('hold on'));
  });

  it('CMD-37: a point that does not exist, or an argument that is not one, is a usage error that changes nothing', async () => {
    const client = await h.client('JSONRPC');
    const { taskId } = await conversation(client);
    const before = texts(await history(client, taskId));
    for (const [args, said] of [
      ['9', /There is no point 9: this conversation has 3/],
      ['two', /"two" is not a point/],
      ['0', /"0" is not a point/],
    ] as const) {
      const reply = (await send(client, `/rewind ${args}`, { taskId })).status?.message;
      assert.equal(dataOf(reply)?.[REPLY_ERROR_KEY], 'command_usage');
      assert.match(textOf(reply), said);
    }
    const now = await history(client, taskId);
    assert.deepEqual(texts(now).slice(0, before.length), before, 'nothing hidden');
    assert.ok(now.every((m) => !rewindOf(m)));
  });
});

describe('while-busy rollback (CMD-37)', () => {
  it('while-busy rollback: the card offers it, as the while-busy schema says', async () => {
    const card = await (await h.client('JSONRPC')).getAgentCard();
    const entry = card.capabilities?.extensions.find((e) => e.uri === WHILE_BUSY_EXTENSION_URI);
    assert.ok((entry?.params?.values as string[]).includes('rollback'));
    const check = new Ajv2020({ strict: false }).compile(whileBusySchema);
    assert.ok(check(entry?.params), JSON.stringify(check.errors));
  });

  it('CMD-37 while-busy rollback: the running turn stops, it and its message leave GetTask and the next model request (kept in the store), then the new message runs; a resend rolls back nothing more', async () => {
    const client = await h.client('JSONRPC');
    const start = await send(client, 'before everything');
    const running = await heldTurn(client, start.id);
    const startedBy = texts(await history(client, start.id)).at(-1)!;
    assert.ok(startedBy.startsWith('hold on'));
    const messageId = randomUUID();
    const instead = sendWhileBusy(client, 'instead of that', start.id, 'rollback', messageId);
    const first = await within('the queued Task', instead.next());
    const note = (first.value?.payload?.value as Task).metadata?.[QUEUED_KEY] as QueuedNote;
    assert.equal(note.position, 1);
    const stopped = finalStatus(await collect(running.stream));
    assert.ok(textOf(stopped.status?.message).endsWith(STOPPED_MARK), 'stopped as /stop stops it');
    const events = await collect(instead);
    assert.equal(textOf(finalStatus(events).status?.message), 're: instead of that alpha beta gamma');
    const opening = events.find((e) => e.payload?.$case === 'task')?.payload?.value as Task;
    assert.ok(rewindOf(opening.history[0]!), "the turn's opening Task carries the mark before the message");

    const visible = await history(client, start.id);
    assert.deepEqual(texts(visible), [
      'before everything',
      're: before everything alpha beta gamma',
      `Rewound to before "${startedBy}"`,
      'instead of that',
      're: instead of that alpha beta gamma',
    ]);
    assert.equal(rewindOf(visible[2]!)?.hidden.length, 2, 'the message and its partial reply');
    assert.deepEqual(userTexts(requestEndingWith('instead of that')), ['before everything', 'instead of that']);
    assert.ok(
      !JSON.stringify(requestEndingWith('instead of that').messages).includes('hold on'),
      'nor the partial reply',
    );
    const stored = storedTexts(start.id);
    assert.ok(stored.includes(startedBy), 'the store keeps the rolled-back message');
    assert.ok(
      stored.some((text) => text.endsWith(STOPPED_MARK)),
      'and its partial reply',
    );

    await collect(sendWhileBusy(client, 'instead of that', start.id, 'rollback', messageId));
    const after = await history(client, start.id);
    assert.deepEqual(texts(after), texts(visible), 'the resend rolled nothing back');
  });
});
