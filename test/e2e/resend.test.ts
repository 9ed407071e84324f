/**
 * CMD-34: a message (its id and content) is handled once per user. A resend gets the task the
 * message went to, as it stands now (following a turn that still runs), never a second turn; a
 * known id with other content is a new message, handled as one (the official TCK reuses ids).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  collect,
  send,
  startTestHarness,
  textOf,
  TRANSPORTS,
  userMessage,
  type TestHarness,
  type TransportName,
} from './support.js';

const REPLY = Array.from({ length: 12 }, (_, i) => `w${i}`).join(' ');

let h: TestHarness;

before(async () => {
  h = await startTestHarness({ script: { reply: REPLY, chunkDelayMs: 15 } });
});

after(async () => {
  await h?.close();
});

const turnsRun = () => h.chatRequests().length;

async function history(client: Client, id: string): Promise<Task> {
  return client.getTask({ tenant: '', id, historyLength: undefined });
}

/** The agent replies a message got: the agent messages right after it in the task's history. */
function agentRepliesTo(task: Task, messageId: string): number {
  const at = task.history.findIndex((m) => m.messageId === messageId);
  assert.ok(at >= 0, `message ${messageId} is in the history`);
  let count = 0;
  for (const m of task.history.slice(at + 1)) {
    if (m.role !== Role.ROLE_AGENT) break;
    count += 1;
  }
  return count;
}

async function taskCount(client: Client): Promise<number> {
  const page = await client.listTasks({
    tenant: '',
    contextId: '',
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: 100,
    pageToken: '',
    historyLength: 0,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  });
  return page.totalSize;
}

/**
 * What the official A2A TCK needs (it gives one messageId to each name for a whole run): the
 * same id with other content is a new message each time, on a new task or as a follow-up on
 * the task the first made; an unchanged resend of any of them still runs nothing.
 */
function reusedIds(transport: TransportName) {
  it(`CMD-34: messages sent with one messageId and other content are each handled as new; unchanged resends of each run nothing, over ${transport}`, async () => {
    const client = await h.client(transport);
    const messageId = randomUUID();
    const turns = turnsRun();
    const first = await send(client, 'The original text', { messageId });
    const followUp = await send(client, 'A follow-up', { taskId: first.id, messageId });
    const another = await send(client, 'Another conversation', { messageId });
    assert.equal(turnsRun(), turns + 3, 'three messages, three turns');
    assert.equal(followUp.id, first.id, 'the follow-up went to its task');
    assert.notEqual(another.id, first.id, 'a new message without a task makes its own');
    for (const answer of [first, followUp, another]) assert.equal(textOf(answer.status?.message), REPLY);
    const stored = await history(client, first.id);
    assert.deepEqual(
      stored.history.map(textOf),
      ['The original text', REPLY, 'A follow-up', REPLY],
      'the follow-up under the used id is stored in its place, with its reply',
    );
    const mine = await history(client, another.id);
    assert.deepEqual(
      mine.history.map(textOf),
      ['Another conversation', REPLY],
      'the message on a task of its own is stored, with its reply',
    );

    const again = await Promise.all([
      send(client, 'The original text', { messageId }),
      send(client, 'A follow-up', { taskId: first.id, messageId }),
      send(client, 'Another conversation', { messageId }),
    ]);
    assert.equal(turnsRun(), turns + 3, 'the resends ran no turn');
    assert.deepEqual(
      again.map((task) => task.id),
      [first.id, first.id, another.id],
    );
    assert.deepEqual(await history(client, first.id), stored, 'nothing was added');
    assert.deepEqual(await history(client, another.id), mine);

    const status = await send(client, '/status', { taskId: another.id, messageId });
    assert.equal(status.id, another.id, 'a command under the id is new too');
    const statusAgain = await send(client, '/status', { taskId: another.id, messageId });
    assert.equal(
      statusAgain.status?.message?.messageId,
      status.status?.message?.messageId,
      'and resent, its first reply (CMD-13)',
    );
    assert.equal(turnsRun(), turns + 3);

    await send(client, 'And one more', { taskId: first.id });
    const sent = h.chatRequests().at(-1);
    assert.deepEqual(
      sent.messages.filter((m: any) => m.role === 'user').map((m: any) => String(m.content)),
      ['The original text', 'A follow-up', 'And one more'],
      "the model's next turn is sent both messages under the id",
    );
  });
}

/** The cases every transport runs: concurrent resends, then a retry once the turn is over. */
function concurrentAndRetried(transport: TransportName, copies: number) {
  it(`CMD-34: ${copies} concurrent sends of one message id run one turn; a later retry runs none, over ${transport}`, async () => {
    const client = await h.client(transport);
    const task = await send(client, '/status');
    const messageId = randomUUID();
    const before = turnsRun();
    const answers = await Promise.all(
      Array.from({ length: copies }, () => send(client, 'Tell me twelve words', { taskId: task.id, messageId })),
    );
    assert.equal(turnsRun(), before + 1, 'one model request');
    assert.deepEqual(new Set(answers.map((a) => a.id)), new Set([task.id]), 'every answer names the task');
    for (const answer of answers) {
      assert.equal(
        answer.status?.state,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        'each answer is the task once the turn has ended',
      );
      assert.equal(textOf(answer.status?.message), REPLY);
    }
    const stored = await history(client, task.id);
    assert.equal(stored.history.filter((m) => m.messageId === messageId).length, 1, 'the message is stored once');
    assert.equal(agentRepliesTo(stored, messageId), 1, 'one agent reply');

    const retried = await send(client, 'Tell me twelve words', { taskId: task.id, messageId });
    assert.equal(turnsRun(), before + 1, 'the retry ran no turn');
    assert.equal(retried.id, task.id);
    assert.equal(
      retried.status?.message?.messageId,
      answers[0]!.status?.message?.messageId,
      'the retry gets the task as it stands: the same reply',
    );
    assert.equal((await history(client, task.id)).history.length, stored.history.length, 'nothing was added');
  });
}

describe('resending a message over JSON-RPC', () => {
  concurrentAndRetried('JSONRPC', 20);

  reusedIds('JSONRPC');

  it('CMD-34: a copied request that changes only the text, keeping the messageId, gets an answer, not an error', async () => {
    const client = await h.client('JSONRPC');
    const messageId = randomUUID();
    const post = (text: string) =>
      fetch(`${h.harness.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'SendMessage',
          params: { message: { messageId, role: 'ROLE_USER', parts: [{ text }] } },
        }),
      }).then((r) => r.json());
    const turns = turnsRun();
    const one = await post('hello');
    const two = await post('hello again');
    assert.equal(one.error, undefined);
    assert.equal(two.error, undefined);
    assert.notEqual(two.result.task.id, one.result.task.id);
    assert.equal(turnsRun(), turns + 2);
    assert.equal((await history(client, two.result.task.id)).history.length, 2);
  });

  it('CMD-34: concurrent sends of one message id without a task make one task', async () => {
    const client = await h.client('JSONRPC');
    const tasksBefore = await taskCount(client);
    const turns = turnsRun();
    const message = userMessage('A new conversation');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} }),
      ),
    );
    const ids = new Set(answers.map((a) => (a as Task).id));
    assert.equal(ids.size, 1, 'every answer names one task');
    assert.equal(await taskCount(client), tasksBefore + 1, 'one task was made');
    assert.equal(turnsRun(), turns + 1, 'one turn ran');
    const [id] = ids;
    const again = (await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: {} })) as Task;
    assert.equal(again.id, id, 'a retry gets the same task');
    assert.equal(await taskCount(client), tasksBefore + 1);
  });

  it('CMD-34: a streaming resend while the turn runs follows that turn to its end; one turn runs', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, '/status');
    const message = userMessage('Stream twelve words', { taskId: task.id });
    const turns = turnsRun();
    const first = client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} });
    const opening = await first.next();
    assert.equal(opening.value?.payload?.$case, 'task');
    const [rest, resent] = await Promise.all([
      collect(first),
      collect(client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} })),
    ]);
    assert.equal(turnsRun(), turns + 1, 'one model request');
    assert.equal(resent[0]?.payload?.$case, 'task', 'the resend starts with the task as it stands');
    const last = (events: StreamResponse[]) => events.at(-1)?.payload?.value as any;
    assert.equal(last(resent).status.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'and ends with the turn');
    assert.equal(last(resent).status.message.messageId, last(rest).status.message.messageId, 'with the same reply');
    const stored = await history(client, task.id);
    assert.equal(agentRepliesTo(stored, message.messageId), 1);
  });

  it("CMD-34: a command resent with its id is not run again, and the id is one user's record for turns as for commands", async () => {
    const client = await h.client('JSONRPC');
    const messageId = randomUUID();
    const first = await send(client, '/status', { messageId });
    const again = await send(client, '/status', { messageId });
    assert.equal(again.id, first.id, 'no second task');
    assert.equal(again.status?.message?.messageId, first.status?.message?.messageId, 'the first reply (CMD-13)');
  });
});

for (const transport of TRANSPORTS.filter((t) => t !== 'JSONRPC')) {
  describe(`resending a message over ${transport}`, () => {
    concurrentAndRetried(transport, 5);

    reusedIds(transport);
  });
}
